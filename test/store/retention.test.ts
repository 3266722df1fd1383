import { describe, expect, it } from 'vitest';
import { horizonFor } from '../../src/store/retention.js';
import { parseRetention } from '../../src/config/retention.js';
import { VersionClock } from '../../src/store/version-clock.js';

describe('history retention policy', () => {
  it.each([
    ['24h', { maxAgeMs: 86_400_000 }],
    ['100000', { maxEntries: 100_000 }],
    ['24h,100000', { maxAgeMs: 86_400_000, maxEntries: 100_000 }],
    [' 90m , 5 ', { maxAgeMs: 5_400_000, maxEntries: 5 }],
    ['none', {}],
  ])('parses %j', (text, want) => {
    expect(parseRetention(text)).toEqual(want);
  });

  it.each(['', 'soon', '24h,12h', '5,6', '-3'])('rejects %j', (text) => {
    expect(() => parseRetention(text)).toThrow(/history retention/);
  });

  it('a count keeps the newest entries; an age drops what was applied before it; both: whichever drops more', () => {
    const clock = new VersionClock(1000);
    clock.note(10, 0);
    clock.note(50, 5_000);
    clock.note(90, 10_000);
    const seqAt = (t: number) => clock.seqAt(t);
    expect(horizonFor({ maxEntries: 30 }, 100, 12_000, seqAt)).toBe(71);
    expect(horizonFor({ maxAgeMs: 6_000 }, 100, 12_000, seqAt)).toBe(51);
    expect(horizonFor({ maxAgeMs: 6_000, maxEntries: 80 }, 100, 12_000, seqAt)).toBe(51);
    expect(horizonFor({ maxAgeMs: 6_000, maxEntries: 20 }, 100, 12_000, seqAt)).toBe(81);
    expect(horizonFor({ maxAgeMs: 60_000 }, 100, 12_000, seqAt)).toBe(1);
    expect(horizonFor({}, 100, 12_000, seqAt)).toBe(1);
    expect(horizonFor({ maxEntries: 0 }, 100, 12_000, seqAt)).toBe(101);
  });

  it('the version clock keeps one sample per interval, moved forward by later notes, and forgets what no question needs', () => {
    const clock = new VersionClock(1000);
    clock.note(1, 0);
    clock.note(2, 500);
    clock.note(3, 1000);
    expect(clock.seqAt(499)).toBeUndefined();
    expect(clock.seqAt(500)).toBe(2);
    expect(clock.seqAt(999)).toBe(2);
    expect(clock.seqAt(1000)).toBe(3);
    expect(clock.seqAt(-1)).toBeUndefined();
    clock.forget(1500);
    expect(clock.seqAt(1500)).toBe(3);
  });
});
