import { describe, expect, it } from 'vitest';
import { humanDuration, since } from '../../src/api/human-duration.js';

const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;

describe('human durations, as kubectl prints ages', () => {
  it.each([
    [-3 * s, '<invalid>'],
    [-1 * s, '0s'],
    [0, '0s'],
    [119 * s, '119s'],
    [2 * m, '2m'],
    [5 * m + 30 * s, '5m30s'],
    [10 * m + 30 * s, '10m'],
    [179 * m, '179m'],
    [3 * h, '3h'],
    [3 * h + 20 * m, '3h20m'],
    [8 * h + 20 * m, '8h'],
    [47 * h, '47h'],
    [2 * d + 4 * h, '2d4h'],
    [3 * d, '3d'],
    [8 * d + 4 * h, '8d'],
    [730 * d, '2y'],
    [3 * 365 * d + 20 * d, '3y20d'],
    [9 * 365 * d, '9y'],
  ])('%d ms → %s', (ms, want) => expect(humanDuration(ms)).toBe(want));

  it('says <unknown> without a timestamp', () => {
    expect(since(undefined)).toBe('<unknown>');
    expect(since('2026-01-01T00:00:00Z', Date.parse('2026-01-01T00:01:00Z'))).toBe('60s');
  });
});
