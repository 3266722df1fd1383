/**
 * Property-based fuzzing of a real server (fast-check): generated malformed bodies, query strings,
 * headers and paths (with odd methods), each malformed by construction. Every answer must be a 4xx
 * carrying a `kind: Status`; the server must stay ready; and a full list of every kind must be
 * unchanged afterwards (nothing malformed was written, nothing deleted).
 *
 * Bounded in count and time: RUNS cases per property, each property stopped after TIME_LIMIT_MS.
 * One run tries 4 × RUNS cases (README, "Tests").
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';
import { apiVersionOfPath, KINDS, rawCall, socketCall, type KindCase, type RawReply, type SocketReply } from '../e2e/support.js';

export const RUNS = 150;
const TIME_LIMIT_MS = 40_000;
const SEED_NS = 'default';

const file = serverForFile();

/** One collection per kind and version, and a seeded object in each. */
const seeded: { k: KindCase; name: string }[] = [];
const at = (k: KindCase) => k.collection(k.namespaced ? SEED_NS : undefined);
const itemOf = (s: { k: KindCase; name: string }) => s.k.item(s.name, s.k.namespaced ? SEED_NS : undefined);

/** name → resourceVersion of everything of every kind: what must not change. */
async function everything(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const k of KINDS) {
    const r = await rawCall(file.base, 'GET', k.collection());
    expect(r.status).toBe(200);
    for (const o of r.body.items) out[`${k.collection()} ${o.metadata.namespace ?? ''}/${o.metadata.name}`] = o.metadata.resourceVersion;
  }
  return out;
}

function expectStatus4xx(r: RawReply | SocketReply, what: string): void {
  const where = `${what} → ${r.status} ${typeof r.body === 'string' ? r.body.slice(0, 200) : JSON.stringify(r.body).slice(0, 300)}`;
  expect(r.status, where).toBeGreaterThanOrEqual(400);
  expect(r.status, where).toBeLessThan(500);
  expect(r.body?.kind, where).toBe('Status');
  expect(r.body?.code, where).toBe(r.status);
}

const params = { numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS, endOnFailure: true };

let before: Record<string, string>;
beforeAll(async () => {
  for (const [i, k] of KINDS.entries()) {
    const name = `fuzz-seed-${i}`;
    const o = k.make(name);
    o.apiVersion = apiVersionOfPath(at(k));
    const r = await rawCall(file.base, 'POST', at(k), JSON.stringify(o));
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    seeded.push({ k, name });
  }
  before = await everything();
});

/** A target (method, path) a body can be sent to, and the media types that method takes. */
const target = fc.integer({ min: 0, max: KINDS.length - 1 }).chain((i) =>
  fc.constantFrom(
    { method: 'POST', path: at(KINDS[i]), types: ['application/json', 'application/yaml'] },
    { method: 'PUT', path: itemOf({ k: KINDS[i], name: `fuzz-seed-${i}` }), types: ['application/json', 'application/yaml'] },
    {
      method: 'PATCH',
      path: itemOf({ k: KINDS[i], name: `fuzz-seed-${i}` }),
      types: ['application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/json-patch+json', 'application/apply-patch+yaml'],
    },
  ),
);

/** Text that is not JSON, opening with `{`; some of it is a YAML flow mapping (`{2}`), an object that names nothing: refused too. */
const notJson = fc
  .string({ maxLength: 200 })
  .map((s) => `{${s}`)
  .filter((s) => {
    try {
      JSON.parse(s);
      return false;
    } catch {
      return true;
    }
  });

/** A valid object of the kind cut short: invalid JSON. */
const truncated = (i: number) =>
  fc.integer({ min: 1, max: 10_000 }).map((n) => {
    const text = JSON.stringify(KINDS[i].make(`fuzz-seed-${i}`));
    return text.slice(0, n % (text.length - 1));
  });

/** A valid object with one thing made impossible: a name, kind or metadata of the wrong type. */
const wrongTyped = (i: number) =>
  fc
    .tuple(fc.constantFrom('name', 'metadata', 'kind', 'apiVersion', 'labels'), fc.oneof(fc.integer(), fc.array(fc.string(), { maxLength: 3 }), fc.constant(null), fc.double(), fc.boolean()))
    .map(([field, v]) => {
      const o = KINDS[i].make(`fuzz-seed-${i}`);
      if (field === 'name') o.metadata.name = v ?? 7;
      else if (field === 'labels') o.metadata.labels = { ok: 'x', bad: v ?? 7 };
      else o[field] = v ?? 7;
      return JSON.stringify(o);
    });

/** A JSON value that is not an object, nor a list of operations (`[]` is a valid JSON patch). */
const notObject = fc
  .oneof(fc.array(fc.oneof(fc.integer(), fc.string(), fc.boolean()), { minLength: 1, maxLength: 5 }), fc.integer(), fc.string(), fc.constant(null), fc.boolean())
  .map((v) => JSON.stringify(v));

/** The seeded objects' paths, and their collections', as segments (the leading '/' left out). */
const validPath = fc
  .constantFrom(...KINDS.map((_, i) => i))
  .chain((i) => fc.constantFrom(at(KINDS[i]), itemOf({ k: KINDS[i], name: `fuzz-seed-${i}` })).map((path) => ({ i, segs: path.slice(1).split('/') })));
/** Methods sent without a body: whatever the path, none can write. */
const bodiless = fc.constantFrom('GET', 'DELETE', 'PUT', 'PATCH', 'POST');
/** `.` or `..`, each dot plain or percent-encoded in either case. */
const dots = fc.array(fc.constantFrom('.', '%2e', '%2E'), { minLength: 1, maxLength: 2 }).map((d) => d.join(''));
/** A `%` not followed by two hex digits. */
const badEscape = fc.constantFrom('%', '%z', '%zz', '%G0', '%%', '%2', '%-1');
const join = (segs: readonly string[]) => `/${segs.join('/')}`;

/**
 * Paths that name no resource or an invalid one, by construction. A segment is only ever inserted
 * before an existing one, never at the end: a trailing empty segment is dropped as Kubernetes drops
 * it, so `…/fuzz-seed-0/` would name the seed itself.
 */
const malformedPath = fc.record({ method: bodiless, base: validPath, at: fc.nat() }).chain(({ method, base, at: n }) => {
  const { i, segs } = base;
  const pos = n % segs.length;
  const inserted = (seg: string) => join([...segs.slice(0, pos), seg, ...segs.slice(pos)]);
  const isItem = segs[segs.length - 1] === `fuzz-seed-${i}`;
  const options = [
    dots.map(inserted),
    fc.constant(inserted('')),
    badEscape.chain((bad) =>
      fc.nat().map((k) => {
        const path = join(segs);
        const cut = 1 + (k % (path.length - 1));
        return path.slice(0, cut) + bad + path.slice(cut);
      }),
    ),
    fc.stringMatching(/^[a-z0-9.-]{0,12}$/).map((host) => `//${host}${join(segs)}`),
    fc.integer({ min: 300, max: 40_000 }).map((len) => join([...segs, 'x'.repeat(len)])),
  ];
  if (isItem) {
    options.push(
      dots.map((d) => join([...segs.slice(0, -1), d])),
      fc.constant(join([...segs.slice(0, -1), `${segs[segs.length - 1]}%25`])),
    );
  }
  // An empty namespace is every namespace for a list or watch (GET of a collection), as in Kubernetes;
  // everywhere else it is malformed.
  if (KINDS[i].namespaced && (isItem || method !== 'GET')) options.push(fc.constant(join(segs.map((s, j) => (segs[j - 1] === 'namespaces' ? '' : s)))));
  return fc.oneof(...options).map((target) => ({ method, target }));
});

/** A method no resource serves, or one the HTTP parser does not know, on a seeded object's path. */
const oddMethod = fc.tuple(fc.constantFrom('CONNECT', 'PROPFIND', 'TRACE', 'OPTIONS', 'PURGE', 'FOO', 'get', 'DELETE\tX'), validPath).map(([method, { segs }]) => ({ method, target: join(segs) }));

describe('fuzz: malformed requests get a 4xx Status and change nothing', () => {
  it(`malformed bodies (${RUNS} cases)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        target.chain((t) => {
          const i = KINDS.findIndex((k) => t.path.startsWith(at(k)));
          return fc.tuple(fc.constant(t), fc.constantFrom(...t.types), fc.oneof(notJson, truncated(i), wrongTyped(i), notObject));
        }),
        async ([t, type, body]) => {
          // A JSON patch must be a list: a wrong-typed object is malformed for it by construction too.
          const r = await rawCall(file.base, t.method, t.path, body, { 'Content-Type': type });
          expectStatus4xx(r, `${t.method} ${t.path} (${type}) ${body.slice(0, 120)}`);
        },
      ),
      params,
    );
  });

  it(`malformed query strings (${RUNS} cases)`, async () => {
    const token = fc.stringMatching(/^[a-z0-9]{1,12}$/);
    const query = fc.oneof(
      fc.string({ maxLength: 30 }).map((s) => ['labelSelector', `${s} in (`]),
      token.map((s) => ['fieldSelector', `nosuchfield${s}=x`]),
      token.map((s) => ['limit', `x${s}`]),
      token.map((s) => ['timeoutSeconds', `x${s}`]),
      token.map((s) => ['resourceVersion', `x${s}`]),
      token.map((s) => ['resourceVersionMatch', `Bogus${s}`]),
      token.map((s) => ['continue', `!${s}`]),
      token.map((s) => ['shardSelector', `shardRange(${s}`]),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...KINDS), query, async (k, [name, value]) => {
        const path = `${k.collection()}?${new URLSearchParams({ [name]: value })}`;
        expectStatus4xx(await rawCall(file.base, 'GET', path), `GET ${path}`);
      }),
      params,
    );
  });

  it(`malformed headers (${RUNS} cases)`, async () => {
    const token = fc.stringMatching(/^[a-z0-9.+-]{1,16}$/);
    const header = fc.oneof(
      token.map((s) => ({ method: 'POST', headers: { 'Content-Type': `application/x-${s}` } })),
      token.map((s) => ({ method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Encoding': `x-${s}` } })),
      token.map((s) => ({ method: 'GET', headers: { Accept: `application/x-${s}` } })),
    );
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: KINDS.length - 1 }), header, async (i, h) => {
        const k = KINDS[i];
        const body = h.method === 'POST' ? JSON.stringify(k.make(`fuzz-new-${i}`)) : undefined;
        const r = await rawCall(file.base, h.method, at(k), body, h.headers);
        expectStatus4xx(r, `${h.method} ${at(k)} ${JSON.stringify(h.headers)}`);
      }),
      params,
    );
  });

  it(`malformed paths and odd methods (${RUNS} cases)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(malformedPath, oddMethod), async ({ method, target }) => {
        const request = `${method} ${target} HTTP/1.1\r\nHost: orchd\r\nConnection: close\r\n\r\n`;
        expectStatus4xx(await socketCall(file.base, request), `${method} ${target.length > 200 ? `${target.slice(0, 200)}… (${target.length} characters)` : target}`);
      }),
      params,
    );
  });

  it('afterwards the server is ready and every kind lists exactly what it listed before', async () => {
    expect((await rawCall(file.base, 'GET', '/readyz')).status).toBe(200);
    expect(await everything()).toEqual(before);
  });
});
