/**
 * Prometheus metrics in the text exposition format. Hand-written because the set is small and fixed:
 * request counts and latencies by verb and resource, log append latency and batch sizes.
 */
import { renderStages } from './stage-timing.js';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A sample's label set as written after its name; none at all rather than an empty `{}`. */
const braced = (labels: string): string => (labels ? `{${labels}}` : '');

class Histogram {
  readonly counts = new Map<string, { buckets: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets = BUCKETS,
  ) {}
  observe(labels: string, value: number): void {
    let h = this.counts.get(labels);
    if (!h) this.counts.set(labels, (h = { buckets: new Array(this.buckets.length).fill(0), sum: 0, count: 0 }));
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]) h.buckets[i]++;
    h.sum += value;
    h.count++;
  }
  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`);
    for (const [labels, h] of this.counts) {
      const sep = labels ? ',' : '';
      for (let i = 0; i < this.buckets.length; i++) out.push(`${this.name}_bucket{${labels}${sep}le="${this.buckets[i]}"} ${h.buckets[i]}`);
      out.push(`${this.name}_bucket{${labels}${sep}le="+Inf"} ${h.count}`);
      out.push(`${this.name}_sum${braced(labels)} ${h.sum}`, `${this.name}_count${braced(labels)} ${h.count}`);
    }
  }
}

class Counter {
  readonly values = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  inc(labels: string, by = 1): void {
    this.values.set(labels, (this.values.get(labels) ?? 0) + by);
  }
  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`);
    for (const [labels, v] of this.values) out.push(`${this.name}${braced(labels)} ${v}`);
  }
}

const label = (pairs: Record<string, string | number>): string =>
  Object.entries(pairs)
    .map(([k, v]) => `${k}="${String(v).replace(/["\\\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`))}"`)
    .join(',');

export class Metrics {
  private readonly requests = new Counter('apiserver_request_total', 'Requests by verb, resource and HTTP code.');
  private readonly latency = new Histogram('apiserver_request_duration_seconds', 'Request latency by verb and resource.');
  private readonly append = new Histogram('orchd_log_append_duration_seconds', 'Time from a batch start to its durable sync.');
  private readonly batch = new Histogram('orchd_log_batch_size', 'Records per synced log batch.', [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);
  private readonly watchers = new Map<string, number>();
  private readonly encryptionReloads = new Counter(
    'apiserver_encryption_config_controller_automatic_reloads_total',
    'Automatic reloads of the encryption configuration by status (success: new providers serve; failure: the last good ones still do).',
  );
  private readonly encryptionReloadAt = new Map<string, number>();

  request(verb: string, resource: string, code: number, seconds: number): void {
    this.requests.inc(label({ verb, resource, code }));
    this.latency.observe(label({ verb, resource }), seconds);
  }

  logBatch(size: number, ms: number): void {
    this.batch.observe('', size);
    this.append.observe('', ms / 1000);
  }

  encryptionConfigReload(status: 'success' | 'failure', atMs: number): void {
    this.encryptionReloads.inc(label({ status }));
    this.encryptionReloadAt.set(label({ status }), atMs / 1000);
  }

  watcherDelta(resource: string, delta: number): void {
    this.watchers.set(resource, (this.watchers.get(resource) ?? 0) + delta);
  }

  render(extra: Record<string, number> = {}): string {
    const out: string[] = [];
    this.requests.render(out);
    this.latency.render(out);
    this.append.render(out);
    this.batch.render(out);
    renderStages(out);
    out.push('# HELP apiserver_registered_watchers Open watches by resource.', '# TYPE apiserver_registered_watchers gauge');
    for (const [r, n] of this.watchers) out.push(`apiserver_registered_watchers{${label({ resource: r })}} ${n}`);
    if (this.encryptionReloadAt.size > 0) {
      this.encryptionReloads.render(out);
      const name = 'apiserver_encryption_config_controller_automatic_reload_last_timestamp_seconds';
      out.push(`# HELP ${name} When the encryption configuration was last reloaded, by status.`, `# TYPE ${name} gauge`);
      for (const [labels, at] of this.encryptionReloadAt) out.push(`${name}{${labels}} ${at}`);
    }
    // A gauge may carry labels in its key (`name{a="b"}`): one TYPE line per metric name.
    const typed = new Set<string>();
    for (const [key, v] of Object.entries(extra)) {
      const name = key.split('{')[0];
      if (!typed.has(name)) out.push(`# TYPE ${name} gauge`);
      typed.add(name);
      out.push(`${key} ${v}`);
    }
    return out.join('\n') + '\n';
  }
}
