import { describe, expect, it } from 'vitest';
import { Pacer, parseSpeed, stampedTimeMs } from '../../src/timetravel/replay/pacing.js';

const at = (creation?: string, managed: string[] = [], deletion?: string) => ({
  metadata: {
    name: 'x',
    ...(creation ? { creationTimestamp: creation } : {}),
    ...(deletion ? { deletionTimestamp: deletion } : {}),
    managedFields: managed.map((time) => ({ manager: 'm', operation: 'Update', time })),
  },
});

describe('parseSpeed', () => {
  it.each([
    ['1', 1],
    ['10', 10],
    ['0.5', 0.5],
    ['max', 'max'],
  ])('%s is %s', (text, speed) => expect(parseSpeed(text)).toBe(speed));

  it.each(['0', '-1', 'fast', '', 'Infinity', 'NaN'])('%j is refused', (text) => {
    expect(() => parseSpeed(text)).toThrow('must be a positive number or max');
  });
});

describe('stampedTimeMs', () => {
  it.each([
    ['creation only', at('2026-01-01T00:00:05Z'), Date.parse('2026-01-01T00:00:05Z')],
    ['the newest managed fields time', at('2026-01-01T00:00:05Z', ['2026-01-01T00:00:09Z', '2026-01-01T00:00:07Z']), Date.parse('2026-01-01T00:00:09Z')],
    ['deletion time', at('2026-01-01T00:00:05Z', [], '2026-01-01T00:01:00Z'), Date.parse('2026-01-01T00:01:00Z')],
    ['no times', at(), undefined],
    ['an unreadable time', at('yesterday'), undefined],
    ['no metadata', { kind: 'X' }, undefined],
    ['not an object', new Uint8Array([1, 2]), undefined],
  ])('%s', (_name, value, ms) => expect(stampedTimeMs(value)).toBe(ms));

  it('ignores times a client set (an Event eventTime)', () => {
    expect(stampedTimeMs({ ...at('2026-01-01T00:00:05Z'), eventTime: '2030-01-01T00:00:00.000000Z' })).toBe(Date.parse('2026-01-01T00:00:05Z'));
  });
});

describe('Pacer', () => {
  // The worked example of src/timetravel/replay/pacing.ts.
  const entries = [at('2026-01-01T12:00:00Z'), at('2026-01-01T12:00:00Z'), at('2026-01-01T12:00:03Z'), at('2026-01-01T12:00:01Z'), at('2026-01-01T12:00:05Z')];

  it('at 10x, entries are due a tenth of their stamped distance from the first', () => {
    const p = new Pacer(10);
    expect(entries.map((e) => p.dueMs(e))).toEqual([0, 0, 300, 300, 500]);
    expect(p.spanMs).toBe(5000);
  });

  it('at 1x, at their stamped distance', () => {
    const p = new Pacer(1);
    expect(entries.map((e) => p.dueMs(e))).toEqual([0, 0, 3000, 3000, 5000]);
  });

  it('at max, everything is due at once, and the span is still measured', () => {
    const p = new Pacer('max');
    expect(entries.map((e) => p.dueMs(e))).toEqual([0, 0, 0, 0, 0]);
    expect(p.spanMs).toBe(5000);
  });

  it('entries before the first stamped one, and unstamped ones, go with the one before', () => {
    const p = new Pacer(2);
    expect([at(), at('2026-01-01T12:00:00Z'), at(), at('2026-01-01T12:00:04Z'), at()].map((e) => p.dueMs(e))).toEqual([0, 0, 0, 2000, 2000]);
  });
});
