import { describe, expect, it } from 'vitest';
import { errorMessage } from '../../../src/shared/domain/errors';

describe('errorMessage: the words of whatever was thrown', () => {
  it('an Error gives its message, a string itself, a KeelError-like object its message', () => {
    expect(errorMessage(new Error('disk full'))).toBe('disk full');
    expect(errorMessage('no key')).toBe('no key');
    expect(errorMessage({ code: 'no_api_key', message: 'No API key is set.', retryable: true })).toBe('No API key is set.');
  });

  it('anything else as JSON, and never throws (cycles, undefined, bigint)', () => {
    expect(errorMessage({ code: 7 })).toBe('{"code":7}');
    expect(errorMessage(42)).toBe('42');
    expect(errorMessage(undefined)).toBe('undefined');
    expect(errorMessage(null)).toBe('null');
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(errorMessage(cycle)).toBe('[object Object]');
    expect(errorMessage(10n)).toBe('10');
  });
});
