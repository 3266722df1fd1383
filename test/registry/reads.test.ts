/**
 * The read side of the door (src/registry/reads.ts and what it runs) on a real Store and MemoryLog:
 * a get at each kind of version, pages and their continue tokens, a prepared watch, the changes
 * controllers follow, the field manager inside the write path, and a kind the server did not start
 * with, read and watched like any other.
 */
import { firstValueFrom, take, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RegistryError, type RegistryErrorCode } from '../../src/registry/errors.js';
import type { WatchFlow } from '../../src/registry/watch.js';
import type { KubeObject } from '../../src/api/types.js';
import { widget } from '../helpers/fixture-kinds.js';
import { openRegistry, type TestRegistry } from '../helpers/registry.js';
import { fixtures } from '../resources/fixtures.js';

let r: TestRegistry;
beforeEach(async () => {
  r = await openRegistry();
  await r.namespace('default');
});
afterEach(() => r.close());

const role = (name: string, labels?: Record<string, string>): KubeObject => ({ ...fixtures.role(), metadata: { name, namespace: 'default', ...(labels ? { labels } : {}) } });
const createRole = (name: string, labels?: Record<string, string>) => r.objects.create(r.kind('Role'), 'default', role(name, labels), { dryRun: false });
const codeOf = (p: Promise<unknown>): Promise<{ code: RegistryErrorCode; extra: RegistryError['extra'] } | 'ok'> =>
  p.then(
    () => 'ok' as const,
    (err: unknown) => {
      if (!(err instanceof RegistryError)) throw err;
      return { code: err.code, extra: err.extra };
    },
  );
const roomy: WatchFlow = { needsDrain: () => false, drained: () => Promise.resolve(), behind: () => false };

describe('the store is behind the door', () => {
  it('is not part of the registry a handler or a controller holds', () => {
    // @ts-expect-error Registry.store is not public: reads go through the registry's methods.
    expect(typeof r.objects.store).toBe('object');
  });
});

describe('read', () => {
  it('unset: the newest state; Exact: the object as it was at that version', async () => {
    const first = await createRole('a');
    const old = Number(first.metadata.resourceVersion);
    await r.objects.update(r.kind('Role'), 'default', 'a', { ...role('a'), rules: [] }, { dryRun: false });
    expect((await r.objects.read(r.kind('Role'), 'default', 'a', {})).seq).toBe(r.log.lastSeq);
    const then = await r.objects.read(r.kind('Role'), 'default', 'a', { resourceVersion: old, resourceVersionMatch: 'Exact' });
    expect(then.seq).toBe(old);
    expect(then.obj.rules).toEqual(first.rules);
  });

  it('refuses with its own codes: past the head 504 at once, below the horizon Expired, absent NotFound', async () => {
    await createRole('a');
    const head = r.log.lastSeq;
    expect(await codeOf(r.objects.read(r.kind('Role'), 'default', 'a', { resourceVersion: head + 5, resourceVersionMatch: 'Exact' }))).toMatchObject({
      code: 'TooLargeResourceVersion',
      extra: { seq: head + 5, current: head, retryAfterSeconds: 0 },
    });
    await createRole('b');
    await r.store.compact(r.log.lastSeq);
    expect(await codeOf(r.objects.read(r.kind('Role'), 'default', 'a', { resourceVersion: 1, resourceVersionMatch: 'Exact' }))).toMatchObject({ code: 'Expired' });
    expect(await codeOf(r.objects.read(r.kind('Role'), 'default', 'zz', {}))).toMatchObject({ code: 'NotFound' });
  });

  it('not older than a version the view has not reached: waits, then 504 with Retry-After', async () => {
    const t = Date.now();
    expect(await codeOf(r.objects.read(r.kind('Role'), 'default', 'a', { resourceVersion: r.log.lastSeq + 1 }))).toMatchObject({
      code: 'TooLargeResourceVersion',
      extra: { retryAfterSeconds: 1 },
    });
    expect(Date.now() - t).toBeGreaterThanOrEqual(2900);
  });
});

describe('listPage', () => {
  it("pages at the first page's version, with a continue token bound to the query", async () => {
    for (const n of ['a', 'b', 'c']) await createRole(n, { tier: n === 'b' ? 'back' : 'front' });
    const first = await r.objects.listPage(r.kind('Role'), 'default', { selectors: {}, limit: 2 });
    expect(first.items.map((s) => s.obj.metadata.name)).toEqual(['a', 'b']);
    await createRole('d');
    const rest = await r.objects.listPage(r.kind('Role'), 'default', { selectors: {}, limit: 2, continue: first.meta.continue! });
    // d was written after the first page's version: not in this list.
    expect(rest.items.map((s) => s.obj.metadata.name)).toEqual(['c']);
    expect(rest.meta.resourceVersion).toBe(first.meta.resourceVersion);
    // The token belongs to its query: another selector is refused.
    expect(await codeOf(r.objects.listPage(r.kind('Role'), 'default', { selectors: { labelSelector: 'tier=front' }, continue: first.meta.continue! }))).toMatchObject({ code: 'BadRequest' });
  });

  it("selects with the kind's fields and labels; a malformed selector is BadRequest", async () => {
    for (const n of ['a', 'b']) await createRole(n, { tier: n });
    const page = await r.objects.listPage(r.kind('Role'), undefined, { selectors: { labelSelector: 'tier=b', fieldSelector: 'metadata.namespace=default' } });
    expect(page.items.map((s) => s.obj.metadata.name)).toEqual(['b']);
    expect(await codeOf(r.objects.listPage(r.kind('Role'), undefined, { selectors: { fieldSelector: 'spec.nope=1' } }))).toMatchObject({ code: 'BadRequest' });
  });

  it('a continue past the horizon is Expired with a token that goes on from the newest state', async () => {
    for (const n of ['a', 'b', 'c']) await createRole(n);
    const first = await r.objects.listPage(r.kind('Role'), 'default', { selectors: {}, limit: 1 });
    await createRole('d');
    await createRole('e');
    // Versions from lastSeq - 1 on stay readable: the first page's is older.
    await r.store.compact(r.log.lastSeq);
    const refused = await codeOf(r.objects.listPage(r.kind('Role'), 'default', { selectors: {}, limit: 1, continue: first.meta.continue! }));
    expect(refused).toMatchObject({ code: 'Expired' });
    const token = refused === 'ok' ? '' : refused.extra.continue!;
    const goOn = await r.objects.listPage(r.kind('Role'), 'default', { selectors: {}, continue: token });
    expect(goOn.items.map((s) => s.obj.metadata.name)).toEqual(['b', 'c', 'd', 'e']);
  });
});

describe('watch and changes', () => {
  it('a prepared watch refuses a bad selector before it starts; started, it has the changes after its version', async () => {
    expect(() => r.objects.watch(r.kind('Role'), 'default', { selectors: { labelSelector: '!!' }, timeoutMs: 60_000 })).toThrow(RegistryError);
    const from = r.log.lastSeq;
    const open = r.objects.watch(r.kind('Role'), 'default', { selectors: {}, resourceVersion: from, timeoutMs: 60_000 });
    const events = firstValueFrom(open(roomy, 60_000).pipe(take(2), toArray()));
    await createRole('a');
    await createRole('b');
    expect((await events).flat().map((e) => ('change' in e ? `${e.type} ${e.change.cur.obj.metadata.name}` : e.type))).toEqual(['ADDED a', 'ADDED b']);
  });

  it("changes(kind) carries that kind's committed changes only, in order", async () => {
    const seen = firstValueFrom(r.objects.changes(r.kind('Role')).pipe(take(2), toArray()));
    await r.namespace('other');
    await createRole('a');
    await r.objects.delete(r.kind('Role'), 'default', 'a', { dryRun: false });
    expect((await seen).map((batch) => batch.map((c) => `${c.type} ${c.key}`))).toEqual([['ADDED rbac.authorization.orch.io/roles/default/a'], ['DELETED rbac.authorization.orch.io/roles/default/a']]);
  });
});

describe('a kind added while the server runs', () => {
  it('is written, read, listed and watched through the same door, with nothing registered for it', async () => {
    const from = r.log.lastSeq;
    const open = r.objects.watch(widget, 'default', { selectors: { labelSelector: 'app=w' }, resourceVersion: from, timeoutMs: 60_000 });
    const events = firstValueFrom(open(roomy, 60_000).pipe(take(1)));
    const w: KubeObject = { apiVersion: 'example.orch.io/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'default', labels: { app: 'w' } }, spec: { color: 'red' } };
    await r.objects.create(widget, 'default', w, { dryRun: false });
    expect((await r.objects.read(widget, 'default', 'w1', {})).obj.spec).toEqual({ color: 'red' });
    expect((await r.objects.listPage(widget, undefined, { selectors: { labelSelector: 'app=w' } })).items.map((s) => s.key)).toEqual(['example.orch.io/widgets/default/w1']);
    expect((await events).map((e) => e.type)).toEqual(['ADDED']);
  });
});

describe('the field manager runs inside the write path', () => {
  const manager = { manager: 'tester', version: 'v1' };

  it("a create and an update record their manager; a write without one (a controller's) records nothing", async () => {
    const created = await r.objects.create(r.kind('Role'), 'default', role('a'), { dryRun: false, fieldManager: manager });
    expect(created.metadata.managedFields).toEqual([expect.objectContaining({ manager: 'tester', operation: 'Update', apiVersion: 'rbac.authorization.orch.io/v1' })]);
    const { obj } = await r.objects.update(r.kind('Role'), 'default', 'a', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { x: '1' } } }), {
      dryRun: false,
      fieldManager: { manager: 'other', version: 'v1' },
    });
    expect((obj.metadata.managedFields as { manager: string }[]).map((m) => m.manager).sort()).toEqual(['other', 'tester']);
    const plain = await r.objects.create(r.kind('Role'), 'default', role('b'), { dryRun: false });
    expect(plain.metadata.managedFields).toBeUndefined();
  });

  it("an apply merges by ownership: another manager's field is a conflict unless forced, and it creates what is missing", async () => {
    const made = await r.objects.apply(r.kind('Role'), 'default', 'a', role('a'), { dryRun: false, fieldManager: manager, force: false });
    expect(made.created).toBe(true);
    await r.objects.update(r.kind('Role'), 'default', 'a', (cur) => ({ ...cur!, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }), {
      dryRun: false,
      fieldManager: { manager: 'editor', version: 'v1' },
    });
    const mine = { ...role('a'), rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }] };
    await expect(r.objects.apply(r.kind('Role'), 'default', 'a', mine, { dryRun: false, fieldManager: manager, force: false })).rejects.toMatchObject({ code: 'Conflict' });
    const forced = await r.objects.apply(r.kind('Role'), 'default', 'a', mine, { dryRun: false, fieldManager: manager, force: true });
    expect(forced.obj.rules).toEqual(mine.rules);
    expect((forced.obj.metadata.managedFields as { manager: string }[]).find((m) => m.manager === 'tester')).toMatchObject({ operation: 'Apply' });
  });
});
