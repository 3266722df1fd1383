/**
 * The policies and bindings of one flavour (validating or mutating) in force, following the store:
 * any committed change to either collection marks the snapshot stale and the next admission
 * re-reads both (writes of policies are rare, admissions frequent). Compiled policies are kept per
 * (policy uid, generation, target kind): a policy compiles once per generation for each kind it is
 * used on, with the flavour's compile function.
 */
import { ProgramCache } from '../cel/index.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { collectionOf } from '../api/object-keys.js';
import type { StoreReads } from '../store/store.js';
import type { PolicySchemas } from './compile-policy.js';

/** A policy with the bindings that name it, each list in name order. */
export interface PolicyHook {
  policy: KubeObject;
  bindings: readonly KubeObject[];
}

export interface PolicySnapshot {
  /** Policies that have at least one binding (the others cannot apply), in name order. */
  hooks: readonly PolicyHook[];
}

/** Compiles a policy for one target kind; errors are kept in the result, never thrown. */
export type PolicyCompile<C> = (policy: KubeObject, schemas: PolicySchemas) => C;

export class PolicyRegistry<C> {
  private snapshot: PolicySnapshot | undefined;
  private readonly cache = new ProgramCache<C>();
  private readonly collections: string[];
  private readonly stop: () => void;

  constructor(
    private readonly store: StoreReads,
    private readonly policyKind: KindStrategy,
    private readonly bindingKind: KindStrategy,
    private readonly compile: PolicyCompile<C>,
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
    // Store lists are in key order, which for cluster-scoped kinds is name order.
    const byPolicy = new Map<string, KubeObject[]>();
    for (const { obj } of this.store.list(collectionOf(this.bindingKind))) {
      const name = String((obj.spec as { policyName?: unknown } | undefined)?.policyName ?? '');
      byPolicy.set(name, [...(byPolicy.get(name) ?? []), obj]);
    }
    const hooks: PolicyHook[] = [];
    const live = new Set<string>();
    for (const { obj } of this.store.list(collectionOf(this.policyKind))) {
      live.add(obj.metadata.uid ?? '');
      const bindings = byPolicy.get(obj.metadata.name ?? '');
      if (bindings) hooks.push({ policy: obj, bindings });
    }
    for (const uid of this.known) if (!live.has(uid)) this.cache.forget(uid);
    this.known = live;
    this.snapshot = { hooks };
    return this.snapshot;
  }

  private known = new Set<string>();

  compiled(policy: KubeObject, target: KindStrategy, schemas: PolicySchemas): C {
    const m = policy.metadata;
    return this.cache.get(m.uid ?? m.name ?? '', m.generation ?? 1, `${target.group}/${target.kind}`, () => this.compile(policy, schemas));
  }

  close(): void {
    this.stop();
  }
}
