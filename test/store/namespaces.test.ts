import { describe, expect, it } from 'vitest';
import { MemoryLog } from '../../src/log/memory-log.js';
import type { KubeObject } from '../../src/api/types.js';
import { Store } from '../../src/store/store.js';

const obj = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'X', metadata: { name } });

describe('the namespaces of a collection', () => {
  it('are each namespace holding objects, once, in key order, whatever sorts around the separator', async () => {
    const log = new MemoryLog();
    await log.open();
    const store = new Store({ log });
    await store.start();
    try {
      // '-' and '.' sort before '/', digits and letters after it: "a-b/…" < "a.c/…" < "a/…" < "a0/…".
      for (const [ns, name] of [
        ['a', 'x'],
        ['a', 'y'],
        ['a-b', 'x'],
        ['a.c', 'x'],
        ['a0', 'x'],
        ['b', 'x'],
        ['b', 'z'],
        ['c', 'gone'],
      ]) {
        await store.put(`g/x/${ns}/${name}`, obj(name), 'absent');
      }
      await store.remove('g/x/c/gone', obj('gone'), 'any');
      expect([...store.namespaces('g/x')]).toEqual(['a-b', 'a.c', 'a', 'a0', 'b']);
      expect([...store.namespaces('g/none')]).toEqual([]);
    } finally {
      await store.close();
      await log.close();
    }
  });
});
