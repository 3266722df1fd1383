/**
 * The generic registry store (src/registry/object-store.ts) on a real Store and MemoryLog: the fixed
 * sequence every write goes through, and the registry's coded errors where it refuses one.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RegistryError } from '../../src/registry/errors.js';
import type { KubeObject } from '../../src/api/types.js';
import { fixtures } from '../resources/fixtures.js';
import { openRegistry, type TestRegistry } from '../helpers/registry.js';

let r: TestRegistry;
beforeEach(async () => {
  r = await openRegistry({ now: () => new Date('2026-01-02T03:04:05.678Z') });
  await r.namespace('default');
});
afterEach(() => r.close());

const role = (name: string, extra: Partial<KubeObject> = {}): KubeObject => ({ ...fixtures.role(), metadata: { name, namespace: 'default' }, ...extra });
const refusal = (p: Promise<unknown>): Promise<{ code: string; message: string; target: unknown } | undefined> =>
  p.then(
    () => undefined,
    (err: unknown) => {
      if (!(err instanceof RegistryError)) throw err;
      return { code: err.code, message: err.message, target: err.target };
    },
  );

describe('create', () => {
  it('sets the system metadata: uid, creation time in whole seconds, generation 1, resourceVersion the log sequence', async () => {
    const created = await r.objects.create(r.kind('Role'), 'default', role('a'), { dryRun: false });
    expect(created.metadata).toMatchObject({ name: 'a', namespace: 'default', creationTimestamp: '2026-01-02T03:04:05Z', generation: 1, resourceVersion: String(r.log.lastSeq) });
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.objects.get(r.kind('Role'), 'default', 'a').seq).toBe(r.log.lastSeq);
  });

  it('completes generateName with five characters', async () => {
    const o = role('');
    o.metadata = { generateName: 'gen-', namespace: 'default' };
    const created = await r.objects.create(r.kind('Role'), 'default', o, { dryRun: false });
    expect(created.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
  });

  it('refuses a resourceVersion, a missing namespace, an existing name and an invalid object, each with its code', async () => {
    await r.objects.create(r.kind('Role'), 'default', role('a'), { dryRun: false });
    const withRv = role('b');
    withRv.metadata.resourceVersion = '3';
    expect(await refusal(r.objects.create(r.kind('Role'), 'default', withRv, { dryRun: false }))).toMatchObject({
      code: 'BadRequest',
      message: 'resourceVersion should not be set on objects to be created',
    });
    expect(await refusal(r.objects.create(r.kind('Role'), 'nowhere', role('b'), { dryRun: false }))).toMatchObject({ code: 'NotFound', target: { resource: 'namespaces', name: 'nowhere' } });
    expect(await refusal(r.objects.create(r.kind('Role'), 'default', role('a'), { dryRun: false }))).toMatchObject({ code: 'AlreadyExists', target: { resource: 'roles', name: 'a' } });
    expect(await refusal(r.objects.create(r.kind('Role'), 'default', role('c', { rules: [{ verbs: [] }] } as Partial<KubeObject>), { dryRun: false }))).toMatchObject({ code: 'Invalid' });
  });

  it('a dry run writes nothing and still answers AlreadyExists for a taken name', async () => {
    const before = r.log.lastSeq;
    await r.objects.create(r.kind('Role'), 'default', role('dry'), { dryRun: true });
    expect(r.log.lastSeq).toBe(before);
    await r.objects.create(r.kind('Role'), 'default', role('taken'), { dryRun: false });
    expect(await refusal(r.objects.create(r.kind('Role'), 'default', role('taken'), { dryRun: true }))).toMatchObject({ code: 'AlreadyExists' });
  });

  it('refuses new content in a namespace being deleted', async () => {
    await r.namespace('leaving');
    const ns = r.kind('Namespace');
    // A finalizer keeps it Terminating instead of gone.
    await r.objects.update(ns, undefined, 'leaving', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: ['example.com/hold'] } }), { dryRun: false });
    await r.objects.delete(ns, undefined, 'leaving', { dryRun: false });
    expect(await refusal(r.objects.create(r.kind('Role'), 'leaving', { ...role('x'), metadata: { name: 'x', namespace: 'leaving' } }, { dryRun: false }))).toMatchObject({
      code: 'Forbidden',
      message: 'unable to create new content in namespace leaving because it is being terminated',
    });
  });
});

describe('update', () => {
  it('a stale resourceVersion or another uid is a Conflict; a matching one writes', async () => {
    const created = await r.objects.create(r.kind('Role'), 'default', role('u'), { dryRun: false });
    const stale = { ...created, metadata: { ...created.metadata, resourceVersion: '1' } };
    expect(await refusal(r.objects.update(r.kind('Role'), 'default', 'u', stale, { dryRun: false }))).toMatchObject({
      code: 'Conflict',
      message: expect.stringContaining('the object has been modified'),
    });
    const otherUid = { ...created, metadata: { ...created.metadata, uid: 'not-it' } };
    expect(await refusal(r.objects.update(r.kind('Role'), 'default', 'u', otherUid, { dryRun: false }))).toMatchObject({
      code: 'Conflict',
      message: expect.stringContaining('Precondition failed: UID in precondition: not-it'),
    });
    const { obj } = await r.objects.update(r.kind('Role'), 'default', 'u', { ...created, metadata: { ...created.metadata, labels: { a: 'b' } } }, { dryRun: false });
    expect(obj.metadata.labels).toEqual({ a: 'b' });
    expect(Number(obj.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
  });

  it('an unchanged object is not written; a spec change moves generation, a metadata change does not', async () => {
    const created = await r.objects.create(r.kind('Role'), 'default', role('g'), { dryRun: false });
    const before = r.log.lastSeq;
    await r.objects.update(r.kind('Role'), 'default', 'g', (cur) => cur!, { dryRun: false });
    expect(r.log.lastSeq).toBe(before);
    const labelled = await r.objects.update(r.kind('Role'), 'default', 'g', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { x: 'y' } } }), { dryRun: false });
    expect(labelled.obj.metadata.generation).toBe(1);
    const changed = await r.objects.update(r.kind('Role'), 'default', 'g', (cur) => ({ ...cur!, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get'] }] }), { dryRun: false });
    expect(changed.obj.metadata.generation).toBe(2);
    expect(changed.obj.metadata.uid).toBe(created.metadata.uid);
  });

  it('a missing object is NotFound, or created when allowed (apply)', async () => {
    expect(await refusal(r.objects.update(r.kind('Role'), 'default', 'none', role('none'), { dryRun: false }))).toMatchObject({ code: 'NotFound' });
    const { created, obj } = await r.objects.update(r.kind('Role'), 'default', 'made', role('made'), { dryRun: false, allowCreate: true });
    expect(created).toBe(true);
    expect(obj.metadata.uid).toBeDefined();
  });
});

describe('delete', () => {
  it('without finalizers removes the object; with them marks it, and the last one removed deletes it', async () => {
    await r.objects.create(r.kind('Role'), 'default', role('plain'), { dryRun: false });
    expect((await r.objects.delete(r.kind('Role'), 'default', 'plain', { dryRun: false })).deleted).toBe(true);
    expect(r.store.get(r.objects.key(r.kind('Role'), 'default', 'plain'))).toBeUndefined();

    await r.objects.create(r.kind('Role'), 'default', { ...role('held'), metadata: { name: 'held', namespace: 'default', finalizers: ['example.com/keep'] } }, { dryRun: false });
    const marked = await r.objects.delete(r.kind('Role'), 'default', 'held', { dryRun: false });
    expect(marked.deleted).toBe(false);
    expect(marked.obj.metadata.deletionTimestamp).toBe('2026-01-02T03:04:05Z');
    await r.objects.update(r.kind('Role'), 'default', 'held', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: [] } }), { dryRun: false });
    expect(r.store.get(r.objects.key(r.kind('Role'), 'default', 'held'))).toBeUndefined();
  });

  it("checks preconditions, and the propagation policy sets the collector's finalizers", async () => {
    await r.objects.create(r.kind('Role'), 'default', role('p'), { dryRun: false });
    expect(await refusal(r.objects.delete(r.kind('Role'), 'default', 'p', { dryRun: false, preconditions: { uid: 'other' } }))).toMatchObject({ code: 'Conflict' });
    expect(await refusal(r.objects.delete(r.kind('Role'), 'default', 'p', { dryRun: false, preconditions: { resourceVersion: '1' } }))).toMatchObject({ code: 'Conflict' });
    const { obj } = await r.objects.delete(r.kind('Role'), 'default', 'p', { dryRun: false, propagationPolicy: 'Orphan' });
    expect(obj.metadata.finalizers).toEqual(['orphan']);
    expect(await refusal(r.objects.delete(r.kind('Role'), 'default', 'gone', { dryRun: false }))).toMatchObject({ code: 'NotFound' });
  });
});
