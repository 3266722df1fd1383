/**
 * Faults on demand: the rules in force, the decision for each request, and what was injected. The
 * http edge asks decide() for every resource request when rules are set (`active` is null without
 * any, so a server without faults pays one null check) and records what it then did.
 */
import type { FaultConfiguration, FaultInjection } from '../config/faults.js';
import type { Sample } from '../observability/samples.js';
import { draw, drawBetween, type DrawKey } from './draw.js';
import { FaultJournal, type InjectedFault } from './journal.js';
import { compileRules, matches, type CompiledRule, type FaultRequest } from './rules.js';

/** A rule that hit a request: what to inject, and how to record it once it was done. */
export interface FaultHit {
  rule: CompiledRule;
  ordinal: number;
  inject: FaultInjection;
  /** The delay drawn for this request (latencyMs, fixed or within its range). */
  latencyMs?: number;
  /** For watch faults: how many events the watch sends before the fault acts. */
  afterEvents: number;
  /** For staleRead: how many versions behind the newest the read is answered, drawn in [1, maxVersionsBehind]. */
  staleBehind?: number;
  request: FaultRequest;
}

export interface FaultsOptions {
  config?: FaultConfiguration | undefined;
  /** The newest resourceVersion applied: where a fault sits among the writes. */
  head: () => number;
  /** The clock of the journal's times (never of decisions); default Date.now. */
  now?: (() => number) | undefined;
  /** The data folder: the journal is appended beside the log. */
  dataDir?: string | undefined;
}

export class Faults {
  /** The compiled rules; null when there are none. */
  active: CompiledRule[] | null = null;
  private config: FaultConfiguration = { seed: 0, rules: [] };
  private counts: number[] = [];
  private generation = -1;
  private readonly journal: FaultJournal;
  private readonly totals = new Map<string, { rule: string; fault: string; n: number }>();
  private readonly listeners = new Set<(f: InjectedFault) => void>();

  constructor(private readonly opts: FaultsOptions) {
    this.journal = new FaultJournal(opts.dataDir);
    this.set(opts.config ?? { seed: 0, rules: [] });
  }

  /** New rules from now on: the same seed unless given, each rule's ordinals from 0, a new sequence of draws. */
  set(config: FaultConfiguration): void {
    this.config = structuredClone(config);
    this.generation++;
    const compiled = compileRules(this.config);
    this.counts = compiled.map(() => 0);
    this.active = compiled.length > 0 ? compiled : null;
  }

  clear(): void {
    this.set({ seed: this.config.seed, rules: [] });
  }

  /**
   * Back to how a start left them (startOrchd's reset()): its rules, with the first sequence of draws
   * again, so each test between resets sees the same faults whatever ran before it; the faults
   * injected so far are forgotten (the journal file beside a log keeps them; the metric counts on).
   */
  restart(config: FaultConfiguration): void {
    this.set(config);
    this.generation = 0;
    this.journal.forget();
  }

  configuration(): FaultConfiguration {
    return structuredClone(this.config);
  }

  /** The first rule that matches the request and hits it; each matching rule tried counts the request. */
  decide(req: FaultRequest): FaultHit | undefined {
    const rules = this.active;
    if (!rules) return undefined;
    for (const rule of rules) {
      if (!matches(rule, req)) continue;
      const ordinal = this.counts[rule.index]++;
      const key: DrawKey = { seed: this.config.seed, generation: this.generation, rule: rule.index, ordinal };
      if (!hits(rule, key)) continue;
      const l = rule.inject.latencyMs;
      const latencyMs = l === undefined ? undefined : typeof l === 'number' ? l : drawBetween(key, l[0], l[1], 1);
      const stale = rule.inject.staleRead;
      return {
        rule,
        ordinal,
        inject: rule.inject,
        ...(latencyMs !== undefined ? { latencyMs } : {}),
        ...(stale ? { staleBehind: drawBetween(key, 1, stale.maxVersionsBehind, 2) } : {}),
        afterEvents: rule.rule.after?.events ?? 0,
        request: req,
      };
    }
    return undefined;
  }

  /** Records a fault the edge injected: the journal, the metric, the listeners (the request's audit event). */
  record(hit: FaultHit, fault: string, detail?: InjectedFault['detail'], object?: { namespace?: string; name?: string }): InjectedFault {
    // A create names its object in the body only: the edge passes what was written.
    const r = object ? { ...hit.request, namespace: object.namespace ?? hit.request.namespace, name: object.name ?? hit.request.name } : hit.request;
    const f: InjectedFault = {
      time: new Date((this.opts.now ?? Date.now)()).toISOString(),
      resourceVersion: String(this.opts.head()),
      rule: hit.rule.name,
      ruleIndex: hit.rule.index,
      ordinal: hit.ordinal,
      fault,
      request: {
        verb: r.verb,
        resource: r.group ? `${r.resource}.${r.group}` : r.resource,
        ...(r.namespace ? { namespace: r.namespace } : {}),
        ...(r.name ? { name: r.name } : {}),
        ...(r.subresource ? { subresource: r.subresource } : {}),
        user: r.user,
        ...(r.userAgent ? { userAgent: r.userAgent } : {}),
      },
      ...(detail ? { detail } : {}),
    };
    this.journal.add(f);
    const k = `${f.rule}\u0000${fault}`;
    const t = this.totals.get(k);
    if (t) t.n++;
    else this.totals.set(k, { rule: f.rule, fault, n: 1 });
    for (const l of this.listeners) l(f);
    return f;
  }

  /** Every fault injected so far, oldest first. */
  injected(): InjectedFault[] {
    return this.journal.list();
  }

  onInjected(fn: (f: InjectedFault) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** orchd_injected_faults_total{rule,fault}, read at every scrape. */
  samples(): Sample[] {
    return [...this.totals.values()].map((t) => ({
      name: 'orchd_injected_faults_total',
      help: 'Faults injected on demand (FaultConfiguration), by rule and fault.',
      type: 'counter' as const,
      labels: { rule: t.rule, fault: t.fault },
      value: t.n,
    }));
  }

  close(): Promise<void> {
    return this.journal.close();
  }
}

/** Whether the rule hits the request with this ordinal: by probability, first, every or after, else always. */
function hits(rule: CompiledRule, key: DrawKey): boolean {
  const r = rule.rule;
  if (r.probability !== undefined) return draw(key) < r.probability;
  if (r.first !== undefined) return key.ordinal < r.first;
  if (r.every !== undefined) return (key.ordinal + 1) % r.every === 0;
  if (r.after?.requests !== undefined) return key.ordinal >= r.after.requests;
  return true;
}
