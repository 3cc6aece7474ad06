import { describe, expect, it } from 'vitest';
import { secondsToMs, TIMEOUT_SECONDS, timeoutSecondsFromSetting, timeoutSecondsFromText } from '../../../src/core/providers/timeouts';
import { waitingNotice } from '../../../src/shared/domain/transcript';

/**
 * The one check of the waits a person sets (`--stall-timeout`, `--response-timeout`,
 * `keel.timeouts.*Seconds`): whole or decimal seconds from 1 to 3600, nothing else.
 */
describe('timeouts a person sets', () => {
  it('a command line takes plain decimal seconds within 1 to 3600', () => {
    expect(timeoutSecondsFromText('2')).toBe(2);
    expect(timeoutSecondsFromText(' 90 ')).toBe(90);
    expect(timeoutSecondsFromText('2.5')).toBe(2.5);
    expect(timeoutSecondsFromText('1')).toBe(TIMEOUT_SECONDS.min);
    expect(timeoutSecondsFromText('3600')).toBe(TIMEOUT_SECONDS.max);
  });

  it.each(['0', '0.5', '-5', '3601', '1e3', '10s', '2 min', 'NaN', 'Infinity', '', ' ', '0x10', '+5', '5.', '1,5'])('a command line refuses %j', (text) => {
    expect(timeoutSecondsFromText(text)).toBeNull();
  });

  it('a settings file takes a JSON number within 1 to 3600, nothing else', () => {
    expect(timeoutSecondsFromSetting(600)).toBe(600);
    expect(timeoutSecondsFromSetting(1.5)).toBe(1.5);
    for (const bad of [0, -1, 0.9, 3600.5, Number.NaN, Number.POSITIVE_INFINITY, '600', null, undefined, true, [600], { seconds: 600 }]) {
      expect(timeoutSecondsFromSetting(bad), JSON.stringify(bad)).toBeNull();
    }
  });

  it('seconds become the providers\' whole milliseconds', () => {
    expect(secondsToMs(2)).toBe(2000);
    expect(secondsToMs(2.5)).toBe(2500);
    expect(secondsToMs(1.25)).toBe(1250);
  });

  it('the waiting notice says the timeout in force as it was set, not rounded to a whole second', () => {
    expect(waitingNotice({ quietMs: 625, stallAfterMs: 2500 })).toBe(
      'No part of the answer for 0.6 s; Keel waits up to 2.5 s of silence, then gives this attempt up as stalled and tries again.',
    );
    expect(waitingNotice({ quietMs: 150_000, stallAfterMs: 600_000 })).toContain('for 3 min; Keel waits up to 10 min of silence');
  });
});
