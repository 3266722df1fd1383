import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import type { KubeObject } from '../../src/api/types.js';
import { indexableTerms, matchesLabels, parseLabelSelector } from '../../src/selectors/label-selector.js';
import { listObjects, type ListQuery } from '../../src/store/list.js';
import { Store } from '../../src/store/store.js';
import { tempStore } from '../helpers/temp-store.js';
import { rng } from '../helpers/rng.js';

const C = 'events.orch.io/events';
let log: LevelDbLog;
let store: Store;

const rand = rng(42);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const VALUES = ['a', 'b', 'c', 'd', ''];
const KEYS = ['app', 'tier', 'orch.io/zone', 'x'];

function randomLabels(): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const k of KEYS) if (rand() < 0.6) labels[k] = pick(VALUES);
  return labels;
}

const obj = (ns: string, name: string, labels: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'X', metadata: { name, namespace: ns, labels } });

beforeAll(async () => {
  ({ log, store } = await tempStore('orchd-label-index-'));
});

afterAll(async () => {
  await store?.close();
  await log?.close();
});

const SELECTORS = ['app=a', 'app in (a,b)', 'tier=,x', 'app=a,tier in (b,c,d)', 'orch.io/zone in (a,d),app!=b', 'x=c,!tier', 'app=b,tier=b,x=b', 'app in (zzz)'];

/** The same query without index terms: a scan of the collection, the reference. */
async function both(sel: string, q: Omit<ListQuery, 'collection' | 'matches' | 'indexTerms'>) {
  const reqs = parseLabelSelector(sel);
  let evaluated = 0;
  const matches = (o: KubeObject) => {
    evaluated++;
    return matchesLabels(reqs, o.metadata.labels);
  };
  const indexed = await listObjects(store, { collection: C, ...q, matches, indexTerms: indexableTerms(reqs) });
  const byIndex = evaluated;
  const scanned = await listObjects(store, { collection: C, ...q, matches });
  return { indexed, scanned, byIndex, byScan: evaluated - byIndex };
}

describe('label index', () => {
  it('answers like a scan on random data, through creates, relabels and deletes, and looks at fewer objects', async () => {
    const live = new Map<string, Record<string, string>>();
    for (let round = 0; round < 4; round++) {
      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < 400; i++) {
        const ns = pick(['n1', 'n2', 'n3']);
        const name = `o${Math.floor(rand() * 600)}`;
        const key = `${C}/${ns}/${name}`;
        const cur = store.latest(key);
        const r = rand();
        if (!cur) {
          const labels = randomLabels();
          live.set(key, labels);
          writes.push(store.put(key, obj(ns, name, labels), 'absent'));
        } else if (r < 0.7) {
          const labels = randomLabels();
          live.set(key, labels);
          writes.push(store.put(key, obj(ns, name, labels), { seq: cur.seq }));
        } else {
          live.delete(key);
          writes.push(store.remove(key, cur.obj, { seq: cur.seq }));
        }
      }
      await Promise.all(writes);
      for (const sel of SELECTORS) {
        for (const prefix of ['', 'n2/']) {
          const { indexed, scanned, byIndex, byScan } = await both(sel, { prefix });
          expect(
            indexed.items.map((s) => s.key),
            `${sel} ${prefix}`,
          ).toEqual(scanned.items.map((s) => s.key));
          expect(byIndex).toBeLessThanOrEqual(byScan);
          if (sel === 'app in (zzz)') expect(byIndex).toBe(0);
        }
      }
    }
    // A selective term evaluates only its candidates: objects carrying app=b.
    const { byIndex } = await both('app=b,tier=b,x=b', { prefix: '' });
    const withAppB = [...live.values()].filter((l) => l.app === 'b').length;
    expect(byIndex).toBeLessThanOrEqual(withAppB);
  });

  it('pages through the index give the same items and continue points as pages through a scan', async () => {
    for (const sel of SELECTORS) {
      let after: string | undefined;
      let pagesIndexed: string[] = [];
      let pagesScanned: string[] = [];
      for (let n = 0; n < 200; n++) {
        const { indexed, scanned } = await both(sel, { prefix: '', limit: 7, ...(after !== undefined ? { after } : {}) });
        expect(indexed.items.map((s) => s.key)).toEqual(scanned.items.map((s) => s.key));
        expect(indexed.next).toBe(scanned.next);
        pagesIndexed = pagesIndexed.concat(indexed.items.map((s) => s.key));
        pagesScanned = pagesScanned.concat(scanned.items.map((s) => s.key));
        if (indexed.next === undefined) break;
        after = indexed.next;
      }
      const whole = await both(sel, { prefix: '' });
      expect(pagesIndexed).toEqual(whole.scanned.items.map((s) => s.key));
      expect(pagesScanned).toEqual(pagesIndexed);
    }
  });
});
