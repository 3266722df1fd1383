/**
 * The mutating webhooks in force, following the store: configurations in name order, each one's
 * webhooks in their order (Kubernetes' order of calls). A committed change to the collection marks
 * the list stale and the next admission re-reads it. A webhook's matchConditions compile once per
 * (configuration uid, generation, webhook, target kind).
 */
import { PolicyCompiler, ProgramCache } from '../cel/index.js';
import { listAt, type JsonObject } from '../api/json-access.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { collectionOf } from '../api/object-keys.js';
import type { StoreReads } from '../store/store.js';
import { compileConditions, type CompiledMatchCondition } from './compile-policy.js';

export interface WebhookEntry {
  /** `<configuration>/<index>`: who has run, for the reinvocation round. */
  uid: string;
  configuration: KubeObject;
  index: number;
  hook: JsonObject;
}

export class WebhookSource {
  private entries: readonly WebhookEntry[] | undefined;
  private readonly cache = new ProgramCache<CompiledMatchCondition[]>();
  private readonly prefix: string;
  private known = new Set<string>();

  constructor(
    private readonly store: StoreReads,
    private readonly kind: KindStrategy,
  ) {
    this.prefix = collectionOf(kind) + '/';
    // Lives as long as the store: the server never drops its admission plugins.
    store.changes$.subscribe((changes) => {
      if (this.entries && changes.some((c) => c.key.startsWith(this.prefix))) this.entries = undefined;
    });
  }

  current(): readonly WebhookEntry[] {
    if (this.entries) return this.entries;
    const entries: WebhookEntry[] = [];
    const live = new Set<string>();
    // Store lists are in key order, which for cluster-scoped kinds is name order.
    for (const { obj } of this.store.list(collectionOf(this.kind))) {
      live.add(obj.metadata.uid ?? '');
      listAt(obj, 'webhooks').forEach((hook, index) => entries.push({ uid: `${obj.metadata.name}/${index}`, configuration: obj, index, hook: hook as JsonObject }));
    }
    for (const uid of this.known) if (!live.has(uid)) this.cache.forget(uid);
    this.known = live;
    this.entries = entries;
    return entries;
  }

  /** The webhook's matchConditions, typed by the kind being admitted. */
  conditions(e: WebhookEntry, target: KindStrategy): CompiledMatchCondition[] {
    const m = e.configuration.metadata;
    return this.cache.get(m.uid ?? m.name ?? '', m.generation ?? 1, `${e.index}/${target.group}/${target.kind}`, () => {
      const compiler = new PolicyCompiler({ kind: 'webhookMatchCondition', schemas: { object: target.schema } });
      return compileConditions(compiler, listAt(e.hook, 'matchConditions'), `webhooks[${e.index}].matchConditions`);
    });
  }
}
