import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fnv1a64 } from '../../src/selectors/shard-selector.js';
import { call } from '../helpers/server.js';
import { createEvent, createNamespace, EVENTS, inBatches, listAll, names, startListServer, type ListServer } from './server.js';

let s: ListServer;
let base: string;
const TIERS = ['web', 'db', 'cache'];
const NS = ['team-a', 'team-b', 'team-c'];

beforeAll(async () => {
  s = await startListServer();
  base = s.url;
  for (const ns of NS) await createNamespace(base, ns, { 'orch.io/team': ns, env: ns === 'team-c' ? 'prod' : 'dev' });
  const specs = Array.from({ length: 90 }, (_, i) => i);
  await inBatches(specs, 30, (i) =>
    createEvent(base, `ev-${String(i).padStart(3, '0')}`, NS[i % 3], {
      labels: { tier: TIERS[i % 3], shard: String(i % 5), ...(i % 4 === 0 ? { canary: 'true' } : {}), 'orch.io/part-of': i % 2 ? 'odd' : 'even', n: String(i) },
      reason: i % 2 ? 'Scheduled' : 'Pulled',
      type: i % 7 === 0 ? 'Warning' : 'Normal',
      regardingName: `pod-${i % 10}`,
    }),
  );
}, 60_000);

afterAll(async () => {
  await s?.cleanup();
});

const list = async (path: string) => {
  const r = await call(base, 'GET', path);
  expect(r.status, r.text).toBe(200);
  return r.body;
};

/** Every Event, unfiltered: what selectors are checked against. */
const all = async () => (await list(`${EVENTS}/events`)).items as any[];

describe('labelSelector over HTTP', () => {
  it.each([
    ['tier=web'],
    ['tier==db,canary'],
    ['tier!=web'],
    ['tier in (web,cache),shard notin (0,1)'],
    ['!canary'],
    ['orch.io/part-of=odd,shard=3'],
    ['n>80'],
    ['n<5,tier in (db)'],
    ['shard in ()'],
    ['missing=x'],
  ])('%s returns exactly the matching objects, in key order', async (sel) => {
    const everything = await all();
    const got = await list(`${EVENTS}/events?labelSelector=${encodeURIComponent(sel)}`);
    const want = everything.filter((o) => localMatch(sel, o.metadata.labels ?? {}));
    expect(names(got.items)).toEqual(names(want));
  });

  it('a label selector restricted to one namespace and paged', async () => {
    const { items } = await listAll(base, `${EVENTS}/namespaces/team-b/events?labelSelector=${encodeURIComponent('tier in (web,db)')}`, 4);
    const want = (await all()).filter((o) => o.metadata.namespace === 'team-b' && ['web', 'db'].includes(o.metadata.labels.tier));
    expect(want.length).toBeGreaterThan(4);
    expect(names(items)).toEqual(names(want));
  });

  it.each([
    ['a b=c', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ['app=-web', 'values[0][app]: Invalid value: "-web"'],
    ['app=web,', "found '', expected: identifier after ','"],
    ['tier in (a', "found '', expected: ',' or ')'"],
  ])('invalid %j is a 400 that says why', async (sel, why) => {
    const r = await call(base, 'GET', `${EVENTS}/events?labelSelector=${encodeURIComponent(sel)}`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    expect(r.body.message).toContain(why);
  });

  it('on a cluster-scoped kind too', async () => {
    const got = await list(`/api/v1/namespaces?labelSelector=${encodeURIComponent('env=dev')}`);
    expect(got.items.map((o: any) => o.metadata.name)).toEqual(['team-a', 'team-b']);
  });
});

describe('fieldSelector over HTTP', () => {
  it.each([
    ['metadata.name=ev-007', (o: any) => o.metadata.name === 'ev-007'],
    ['metadata.namespace==team-c', (o: any) => o.metadata.namespace === 'team-c'],
    ['metadata.namespace!=team-c,type=Warning', (o: any) => o.metadata.namespace !== 'team-c' && o.type === 'Warning'],
    ['reason=Scheduled', (o: any) => o.reason === 'Scheduled'],
    ['regarding.name=pod-3', (o: any) => o.regarding.name === 'pod-3'],
    ['regarding.kind=Pod,regarding.namespace=team-a', (o: any) => o.metadata.namespace === 'team-a'],
    ['regarding.uid=uid-ev-011', (o: any) => o.metadata.name === 'ev-011'],
    ['reportingController=orch.io/lists', () => true],
    ['type!=Normal', (o: any) => o.type !== 'Normal'],
  ])('Event %s', async (sel, want) => {
    const everything = await all();
    const got = await list(`${EVENTS}/events?fieldSelector=${encodeURIComponent(sel)}`);
    const expected = everything.filter(want);
    expect(expected.length).toBeGreaterThan(0);
    expect(names(got.items)).toEqual(names(expected));
  });

  it('metadata.name and metadata.namespace work on a cluster-scoped kind (its namespace is empty)', async () => {
    expect((await list('/api/v1/namespaces?fieldSelector=metadata.name%3Dteam-b')).items.map((o: any) => o.metadata.name)).toEqual(['team-b']);
    const empty = await list('/api/v1/namespaces?fieldSelector=metadata.namespace%3D');
    expect(empty.items.length).toBeGreaterThanOrEqual(7);
    expect((await list('/api/v1/namespaces?fieldSelector=metadata.namespace%3Dx')).items).toEqual([]);
  });

  it('an unsupported field is a 400 naming it, as Kubernetes words it', async () => {
    for (const path of [`${EVENTS}/events?fieldSelector=spec.foo%3Dx`, '/api/v1/namespaces?fieldSelector=reason%3Dx']) {
      const r = await call(base, 'GET', path);
      expect(r.status).toBe(400);
      expect(r.body.message).toMatch(/^field label not supported: (spec\.foo|reason)$/);
    }
  });

  it('a selector that does not parse is a 400', async () => {
    const r = await call(base, 'GET', `${EVENTS}/events?fieldSelector=metadata.name`);
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe('BadRequest');
  });
});

describe('shardSelector over HTTP', () => {
  const range = (i: number, n: number) => {
    const hex = (v: bigint) => '0x' + (v === 1n << 64n ? '10000000000000000' : v.toString(16).padStart(16, '0'));
    const step = (1n << 64n) / BigInt(n);
    const lo = step * BigInt(i);
    const hi = i === n - 1 ? 1n << 64n : step * BigInt(i + 1);
    return `shardRange(object.metadata.uid, '${hex(lo)}', '${hex(hi)}')`;
  };

  it('N disjoint ranges covering the hash space partition a list exactly', async () => {
    const everything = await all();
    for (const n of [2, 4, 7]) {
      const seen: string[] = [];
      for (let i = 0; i < n; i++) {
        const sel = range(i, n);
        const got = await list(`${EVENTS}/events?shardSelector=${encodeURIComponent(sel)}`);
        expect(got.metadata.shardInfo).toEqual({ selector: sel });
        for (const o of got.items) {
          const h = BigInt('0x' + fnv1a64(o.metadata.uid));
          const step = (1n << 64n) / BigInt(n);
          expect(h >= step * BigInt(i) && (i === n - 1 || h < step * BigInt(i + 1))).toBe(true);
        }
        seen.push(...names(got.items));
      }
      expect(seen.sort()).toEqual(names(everything).sort());
      expect(new Set(seen).size).toBe(seen.length);
    }
  });

  it('ranges joined by || select their union; paging and labels combine with them', async () => {
    const sel = `${range(0, 4)} || ${range(2, 4)}`;
    const a = await list(`${EVENTS}/events?shardSelector=${encodeURIComponent(range(0, 4))}`);
    const c = await list(`${EVENTS}/events?shardSelector=${encodeURIComponent(range(2, 4))}`);
    const { items, metas } = await listAll(base, `${EVENTS}/events?shardSelector=${encodeURIComponent(sel)}&labelSelector=tier%3Dweb`, 3);
    const want = [...a.items, ...c.items].filter((o) => o.metadata.labels.tier === 'web');
    expect(names(items).sort()).toEqual(names(want).sort());
    expect(metas.every((m) => m.remainingItemCount === undefined)).toBe(true);
  });

  it('by namespace: one namespace lands in exactly one of two halves', async () => {
    const halves = [0, 1].map((i) => range(i, 2).replace('uid', 'namespace'));
    const counts = [];
    for (const h of halves) {
      const got = await list(`${EVENTS}/events?shardSelector=${encodeURIComponent(h)}`);
      for (const ns of NS) {
        const inNs = got.items.filter((o: any) => o.metadata.namespace === ns).length;
        expect([0, 30]).toContain(inNs);
      }
      counts.push(got.items.length);
    }
    expect(counts[0] + counts[1]).toBe(90);
  });

  it.each([
    ["shardRange(object.metadata.uid, '0x8000000000000000', '0x0')", 'must be less than end'],
    ["shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')", 'unsupported field path'],
    ['shardRange(', 'invalid shard selector'],
  ])('malformed %j is a 400', async (sel, why) => {
    const r = await call(base, 'GET', `${EVENTS}/events?shardSelector=${encodeURIComponent(sel)}`);
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('invalid shard selector: ');
    expect(r.body.message).toContain(why);
  });
});

/** An independent reading of the selectors used above, to check the server against. */
function localMatch(sel: string, labels: Record<string, string>): boolean {
  return sel.split(/,(?![^(]*\))/).every((term) => {
    term = term.trim();
    let m;
    if ((m = /^(\S+) (in|notin) \((.*)\)$/.exec(term))) {
      const values = m[3] === '' ? [''] : m[3].split(',');
      const has = m[1] in labels;
      return m[2] === 'in' ? has && values.includes(labels[m[1]]) : !has || !values.includes(labels[m[1]]);
    }
    if ((m = /^(.+?)(==|!=|=|>|<)(.*)$/.exec(term))) {
      const [, k, op, v] = m;
      const has = k in labels;
      if (op === '!=') return !has || labels[k] !== v;
      if (op === '>') return has && Number(labels[k]) > Number(v);
      if (op === '<') return has && Number(labels[k]) < Number(v);
      return has && labels[k] === v;
    }
    if (term.startsWith('!')) return !(term.slice(1) in labels);
    return term in labels;
  });
}
