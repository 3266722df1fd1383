import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/config/duration.js';

describe('Go durations', () => {
  it.each([
    ['0', 0],
    ['30s', 30],
    ['1h30m', 5400],
    ['1.5h', 5400],
    ['500ms', 0.5],
    ['100us', 0.0001],
    ['-2s', -2],
    ['+2m', 120],
    ['.5s', 0.5],
    ['1m1s', 61],
  ])('%s is %f s', (text, seconds) => {
    expect(parseDuration(text)).toBeCloseTo(seconds, 9);
  });

  it.each(['', '5', '5x', 's', '1h 30m', '-', '1.5.5s', '3 seconds'])('refuses %j', (text) => {
    expect(() => parseDuration(text)).toThrow(`time: invalid duration ${JSON.stringify(text)}`);
  });
});
