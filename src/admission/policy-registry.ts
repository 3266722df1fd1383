/**
 * The validating policies and bindings in force, following the store: any committed change to
 * either collection marks the snapshot stale and the next admission re-reads both (writes of
 * policies are rare, admissions frequent). Compiled policies are kept per (policy uid, generation,
 * target kind): a policy compiles once per generation for each kind it is used on.
 */
import { ProgramCache } from '../cel/index.js';
import type { KindStrategy } from '../resources/strategy.js';
import type { KubeObject } from '../resources/types.js';
import { collectionOf } from '../store/keys.js';
import type { Store } from '../store/store.js';
import { compilePolicy, type CompiledPolicy, type PolicySchemas } from './compile-policy.js';

export interface PolicySnapshot {
  policies: ReadonlyMap<string, KubeObject>;
  /** In name order, as Kubernetes' informer lists them. */
  bindings: readonly KubeObject[];
}

export class PolicyRegistry {
  private snapshot: PolicySnapshot | undefined;
  private readonly cache = new ProgramCache<CompiledPolicy>();
  private readonly collections: string[];
  private readonly stop: () => void;

  constructor(
    private readonly store: Store,
    private readonly policyKind: KindStrategy,
    private readonly bindingKind: KindStrategy,
  ) {
    this.collections = [collectionOf(policyKind), collectionOf(bindingKind)].map((c) => c + '/');
    const sub = store.changes$.subscribe((changes) => {
      if (this.snapshot && changes.some((c) => this.collections.some((p) => c.key.startsWith(p)))) this.snapshot = undefined;
    });
    this.stop = () => sub.unsubscribe();
  }

  /** How many compilations ran (tests: a generation compiles once). */
  get compiles(): number {
    return this.cache.compiles;
  }

  current(): PolicySnapshot {
    if (this.snapshot) return this.snapshot;
    const policies = new Map<string, KubeObject>();
    for (const s of this.store.list(collectionOf(this.policyKind))) policies.set(s.obj.metadata.name ?? '', s.obj);
    const bindings = [...this.store.list(collectionOf(this.bindingKind))].map((s) => s.obj);
    const live = new Set([...policies.values()].map((p) => p.metadata.uid ?? ''));
    for (const uid of this.known) if (!live.has(uid)) this.cache.forget(uid);
    this.known = live;
    this.snapshot = { policies, bindings };
    return this.snapshot;
  }

  private known = new Set<string>();

  compiled(policy: KubeObject, target: KindStrategy, schemas: PolicySchemas): CompiledPolicy {
    const m = policy.metadata;
    return this.cache.get(m.uid ?? m.name ?? '', m.generation ?? 1, `${target.group}/${target.kind}`, () => compilePolicy(policy, schemas));
  }

  close(): void {
    this.stop();
  }
}
