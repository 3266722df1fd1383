/**
 * The registry on real parts for unit tests of src/registry and src/controllers: a Store on a
 * MemoryLog (the Log contract's in-memory backend), every served kind, and admission as the server
 * builds it (no policies unless a test writes some).
 */
import { afterEach, beforeEach } from 'vitest';
import { admissionFor } from '../../src/admission/index.js';
import { LogSkeleton } from '../../src/log/log-skeleton.js';
import { MemoryLog } from '../../src/log/memory-log.js';
import { Registry } from '../../src/registry/registry.js';
import { kinds } from '../../src/resources/kinds.js';
import type { KindStrategy } from '../../src/api/strategy.js';
import type { KubeObject } from '../../src/api/types.js';
import { Store } from '../../src/store/store.js';

export interface TestRegistry<L extends LogSkeleton = MemoryLog> {
  log: L;
  store: Store;
  objects: Registry;
  /** A served kind by its kind name. */
  kind(name: string): KindStrategy;
  /** The current object of a kind, undefined when there is none. */
  current(kind: string, namespace: string | undefined, name: string): KubeObject | undefined;
  /** Creates a namespace (most writes need one). */
  namespace(name: string): Promise<KubeObject>;
  close(): Promise<void>;
}

/** The registry on a MemoryLog, or on the log given (opened here): an EtcdLog shows what a replica sees. */
export async function openRegistry(clock?: { now(): Date }): Promise<TestRegistry>;
export async function openRegistry<L extends LogSkeleton>(clock: { now(): Date } | undefined, log: L): Promise<TestRegistry<L>>;
export async function openRegistry(clock: { now(): Date } = { now: () => new Date() }, log: LogSkeleton = new MemoryLog()): Promise<TestRegistry<LogSkeleton>> {
  await log.open();
  const store = new Store({ log });
  await store.start();
  const objects = new Registry(store, clock, admissionFor(store, kinds));
  const kind = (name: string): KindStrategy => {
    const k = kinds.find((x) => x.kind === name);
    if (!k) throw new Error(`no kind ${name}`);
    return k;
  };
  return {
    log,
    store,
    objects,
    kind,
    current: (k, namespace, name) => store.get(objects.key(kind(k), namespace, name))?.obj,
    namespace: (name) => objects.create(kind('Namespace'), undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, { dryRun: false }),
    async close() {
      await store.close();
      await log.close();
    },
  };
}

/** A valid Role in a namespace, with extra metadata. */
export const roleIn = (name: string, namespace: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'rbac.authorization.orch.io/v1',
  kind: 'Role',
  metadata: { name, namespace, ...extra },
  rules: [{ apiGroups: ['events.orch.io'], resources: ['events'], verbs: ['get', 'list', 'watch'] }],
});

/**
 * A fresh registry for each test of a file, and the stops of what a test started (controllers),
 * called in reverse order before the registry closes.
 */
export function registryPerTest(): { readonly r: TestRegistry; readonly stops: (() => void)[] } {
  let current: TestRegistry | undefined;
  const stops: (() => void)[] = [];
  beforeEach(async () => {
    current = await openRegistry();
  });
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) stop();
    await current?.close();
  });
  return {
    get r() {
      return current!;
    },
    stops,
  };
}
