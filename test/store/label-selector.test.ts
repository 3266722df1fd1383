import { describe, expect, it } from 'vitest';
import { matchesLabels, parseLabelSelector, SelectorError } from '../../src/store/label-selector.js';

const labels = { app: 'web', tier: 'front', 'orch.io/part-of': 'demo', empty: '' };

describe('label selector grammar', () => {
  it.each([
    ['equality', 'app=web', true],
    ['double equality', 'app==web', true],
    ['inequality', 'app!=web', false],
    ['inequality on a missing key matches', 'missing!=x', true],
    ['in', 'tier in (front,back)', true],
    ['in without match', 'tier in (back)', false],
    ['notin', 'tier notin (back)', true],
    ['notin on a missing key matches', 'missing notin (x)', true],
    ['exists', 'app', true],
    ['exists missing', 'missing', false],
    ['does not exist', '!missing', true],
    ['does not exist but does', '!app', false],
    ['qualified key', 'orch.io/part-of=demo', true],
    ['AND of terms', 'app=web,tier=back', false],
    ['empty value', 'empty=', true],
    ['in with an empty value', 'empty in (,x)', true],
    ['spaces', ' app = web , tier in ( front ) ', true],
    ['empty selector matches everything', '', true],
  ])('%s: %s', (_n, sel, want) => {
    expect(matchesLabels(parseLabelSelector(sel), labels)).toBe(want);
  });

  it.each([
    ['operator without key', '=web'],
    ['bad key', 'a b=c'],
    ['bad value', 'app=-web'],
    ['unclosed set', 'tier in (a,b'],
    ['empty set', 'tier in ()'],
    ['dangling comma', 'app=web,'],
    ['bad prefix', 'Bad_Prefix/x=y'],
    ['unknown operator', 'app > 3'],
  ])('rejects %s: %s', (_n, sel) => {
    expect(() => parseLabelSelector(sel)).toThrow(SelectorError);
  });
});
