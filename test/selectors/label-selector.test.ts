import { describe, expect, it } from 'vitest';
import { formatLabelSelector, indexableTerms, matchesLabels, parseLabelSelector, SelectorError } from '../../src/selectors/label-selector.js';

const labels = { app: 'web', tier: 'front', 'orch.io/part-of': 'demo', empty: '', replicas: '12' };

describe('label selector grammar (Kubernetes labels.Parse)', () => {
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
    ['`in ()` is the set of the empty value', 'empty in ()', true],
    ['`in ()` does not match a non-empty value', 'app in ()', false],
    ['`in` and `notin` are values inside a set', 'app notin (in,notin)', true],
    ['spaces, tabs and newlines', ' app = web ,\ttier in ( front )\n', true],
    ['greater than', 'replicas>3', true],
    ['greater than, false', 'replicas>12', false],
    ['less than', 'replicas<13', true],
    ['greater than on a non-integer label is false', 'app>1', false],
    ['greater than on a missing label is false', 'missing>1', false],
    ['empty selector matches everything', '', true],
  ])('%s: %s', (_n, sel, want) => {
    expect(matchesLabels(parseLabelSelector(sel), labels)).toBe(want);
  });

  it.each([
    ['operator without key', '=web', "found '=', expected: !, identifier, or 'end of string'"],
    ['two words', 'a b=c', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ['bad value', 'app=-web', 'unable to parse requirement: values[0][app]: Invalid value: "-web": a valid label must be an empty string'],
    ['unclosed set', 'tier in (a,b', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['dangling comma', 'app=web,', "found '', expected: identifier after ','"],
    ['bad prefix', 'Bad_Prefix/x=y', 'unable to parse requirement: Invalid value: "Bad_Prefix/x": prefix part'],
    ['non-integer comparison', 'a>b', "for 'Gt', 'Lt' operators, the value must be an integer"],
    ['set without parentheses', 'a in x', "found 'x' expected: '('"],
    ['unknown symbol run', 'a=!b', "found '!', expected: identifier"],
    ['two terms without comma', 'a=b c=d', "found 'c', expected: ',' or 'end of string'"],
  ])('rejects %s: %s', (_n, sel, message) => {
    let err: unknown;
    try {
      parseLabelSelector(sel);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SelectorError);
    expect((err as Error).message).toContain(message);
  });

  it('sorts terms by key and set values, and writes the canonical form back', () => {
    const reqs = parseLabelSelector('z in (c,a,b), a=1, !m, k');
    expect(reqs.map((r) => r.key)).toEqual(['a', 'k', 'm', 'z']);
    expect(formatLabelSelector(reqs)).toBe('a=1,k,!m,z in (a,b,c)');
  });

  it('equality and in terms are the indexable ones', () => {
    expect(indexableTerms(parseLabelSelector('a=1,b in (x,y),c!=2,d,!e,f notin (z)'))).toEqual([
      { key: 'a', values: ['1'] },
      { key: 'b', values: ['x', 'y'] },
    ]);
  });
});
