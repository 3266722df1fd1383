/**
 * The write gate counts a write in until it settles, however it ends: resolved, rejected, or thrown
 * before it returned a promise. A close waits for exactly those, and refuses new writes meanwhile.
 */
import { expect, test } from 'vitest';
import { WriteGate } from '../../src/registry/write-gate.js';

test('a write that resolves, rejects or throws at once is counted out; close waits for the one still running', async () => {
  const gate = new WriteGate();
  await expect(gate.through(async () => 1)).resolves.toBe(1);
  await expect(gate.through(() => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
  await expect(
    gate.through(() => {
      throw new Error('at once');
    }),
  ).rejects.toThrow('at once');
  let finish!: (v: string) => void;
  const slow = gate.through(() => new Promise<string>((r) => (finish = r)));
  let closed = false;
  const closing = gate.close('resetting').then(() => (closed = true));
  await new Promise((r) => setImmediate(r));
  expect(closed).toBe(false);
  expect(() => gate.through(async () => 2)).toThrow();
  finish('done');
  await expect(slow).resolves.toBe('done');
  await closing;
  expect(closed).toBe(true);
  gate.open();
  await expect(gate.through(async () => 3)).resolves.toBe(3);
});
