/**
 * startOrchd's reset() and faults: a reset returns the faults to how the start left them, as it does
 * the objects. The start's rules come back (rules a test set go), their draws start over (so a test
 * sees the same faults whatever ran before it), and the faults injected before are forgotten.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startOrchd, type Orchd } from '../../src/index.js';
import { call } from '../helpers/server.js';

const CM = '/api/v1/namespaces/default/configmaps';
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });

let api: Orchd;
beforeAll(async () => {
  api = await startOrchd({ faults: { seed: 11, rules: [{ name: 'flaky-creates', match: { verbs: ['create'] }, probability: 0.5, inject: { status: 500 } }] } });
});
afterAll(() => api?.stop());

/** The status of each of n creates, in order. */
async function creates(prefix: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await call(api.url, 'POST', CM, cm(`${prefix}-${i}`))).status);
  return out;
}

it('reset() brings back the start rules, their first draws, and an empty list of injected faults', async () => {
  const first = await creates('a', 16);
  expect(first).toContain(500);
  expect(first).toContain(201);
  expect(api.faults.injected()).toHaveLength(first.filter((s) => s === 500).length);

  api.faults.set({ seed: 11, rules: [{ name: 'every-create', match: { verbs: ['create'] }, inject: { status: 503 } }] });
  expect((await creates('b', 1))[0]).toBe(503);

  await api.reset();
  expect(api.faults.injected()).toEqual([]);
  // Same names as the first run: the reset deleted them, and the draws are the start's again.
  expect(await creates('a', 16)).toEqual(first);
  expect(api.faults.injected().every((f) => f.rule === 'flaky-creates')).toBe(true);
});
