import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../../src/core/workers/protocol';
import { FAKE_WORKER } from './fakeWorker';

/**
 * The fake worker (test/fixtures/fake-worker/worker.mjs, plain JavaScript: it cannot import the
 * protocol's declarations) announces the protocol version the host speaks unless a test asks for
 * another; when PROTOCOL_VERSION moves, this says where to follow it rather than every worker test
 * failing on "the worker speaks protocol N".
 */
describe('the fake worker', () => {
  it("announces this build's protocol version by default", () => {
    const announced = /protocol: Number\(value\('--protocol'\) \?\? (\d+)\)/.exec(readFileSync(FAKE_WORKER, 'utf8'));
    expect(announced?.[1]).toBe(String(PROTOCOL_VERSION));
  });
});
