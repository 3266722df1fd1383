/**
 * /metrics on prom-client, with the families named as kube-apiserver names them so that existing
 * dashboards and alerts read orchd: requests (apiserver_request_total, _duration_seconds), watch
 * events, the log's batches, etcd's request latency, and the readings other rooms give at scrape
 * time (in-flight requests, registered watchers, stored objects: SampleSource). One Metrics per
 * server, each with its own registry (a test process runs several servers); the process's own
 * metrics (process_*, nodejs_*) are shared by all of them.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { processMetrics } from './process-metrics.js';
import type { Sample, SampleSource } from './samples.js';
import { STAGES, stageTimingOn, stageTotals } from './stage-timing.js';
import { WatchEventCounts } from './watch-events.js';

/** kube-apiserver's latency buckets, with two below its 5 ms (most of orchd's requests take less). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
const FAST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** What kube-apiserver labels a request with (its RequestInfo), but the code. */
export interface RequestLabels {
  /** LIST, GET, WATCH, POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION. */
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  /** cluster, namespace or resource (one named object). */
  scope: string;
}

const REQUEST_LABELS = ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;

export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'apiserver_request_total',
    help: 'Counter of apiserver requests broken out for each verb, group, version, resource, scope, component, and HTTP response code.',
    labelNames: [...REQUEST_LABELS, 'code'],
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'apiserver_request_duration_seconds',
    help: 'Response latency distribution in seconds for each verb, group, version, resource, subresource, scope and component (WATCH not included).',
    labelNames: REQUEST_LABELS,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly batchSize = new Histogram({
    name: 'orchd_log_batch_size',
    help: 'Records per synced log batch (concurrent writes share one).',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
    registers: [this.registry],
  });
  private readonly syncLatency = new Histogram({
    name: 'orchd_log_append_duration_seconds',
    help: "Time from a log batch's first append to its durable sync.",
    buckets: FAST_BUCKETS,
    registers: [this.registry],
  });
  private readonly etcd = new Histogram({
    name: 'etcd_request_duration_seconds',
    help: 'Etcd request latency in seconds for each operation and object type.',
    labelNames: ['operation', 'type'],
    buckets: FAST_BUCKETS,
    registers: [this.registry],
  });
  private readonly encryptionReloads = new Counter({
    name: 'apiserver_encryption_config_controller_automatic_reloads_total',
    help: 'Automatic reloads of the encryption configuration by status (success: new providers serve; failure: the last good ones still do).',
    labelNames: ['status'],
    registers: [this.registry],
  });
  private readonly encryptionReloadAt = new Gauge({
    name: 'apiserver_encryption_config_controller_automatic_reload_last_timestamp_seconds',
    help: 'When the encryption configuration was last reloaded, by status.',
    labelNames: ['status'],
    registers: [this.registry],
  });
  /** Each event sent to each watcher, by kind. */
  readonly watchEvents = new WatchEventCounts(this.registry);
  private readonly sources: SampleSource[] = [];
  /** The families of the sources' samples, made at the first scrape that shows each name. */
  private readonly sampled = new Map<string, Counter | Gauge>();
  /** The label objects of each request label set and code seen (a few dozen: verbs × resources × codes). */
  private readonly requestLabelSets = new Map<string, { latency: RequestLabels & { component: string }; total: RequestLabels & { component: string; code: number } }>();

  constructor() {
    // Off unless ORCHD_STAGE_TIMING=1: then a write's stages, as the writes benchmark reads them.
    if (stageTimingOn) this.stageFamilies();
  }

  request(labels: RequestLabels, code: number, seconds: number): void {
    // One pair of label objects per label set, made once: two spreads per request cost more than
    // prom-client's own work (bench/RESULTS.md section 52).
    const key = `${labels.verb} ${labels.group} ${labels.version} ${labels.resource} ${labels.subresource} ${labels.scope} ${code}`;
    let sets = this.requestLabelSets.get(key);
    if (!sets) {
      const l = { ...labels, component: 'apiserver' };
      this.requestLabelSets.set(key, (sets = { latency: l, total: { ...l, code } }));
    }
    this.requests.inc(sets.total);
    if (labels.verb !== 'WATCH') this.latency.observe(sets.latency, seconds);
  }

  logBatch(size: number, ms: number): void {
    this.batchSize.observe(size);
    this.syncLatency.observe(ms / 1000);
  }

  /** One request to etcd: operation (create, update, delete, get) and type (the resource). */
  etcdRequest(operation: string, type: string, seconds: number): void {
    this.etcd.observe({ operation, type }, seconds);
  }

  encryptionConfigReload(status: 'success' | 'failure', atMs: number): void {
    this.encryptionReloads.inc({ status });
    this.encryptionReloadAt.set({ status }, atMs / 1000);
  }

  /** Adds readings taken at every scrape. */
  readAtScrape(source: SampleSource): void {
    this.sources.push(source);
  }

  readonly contentType = this.registry.contentType;

  /** The text exposition: the process's metrics, then this server's. */
  async render(): Promise<string> {
    this.takeSamples();
    return (await processMetrics().metrics()) + '\n' + (await this.registry.metrics());
  }

  private takeSamples(): void {
    const byName = new Map<string, Sample[]>();
    for (const source of this.sources) {
      for (const s of source()) {
        const list = byName.get(s.name);
        if (list) list.push(s);
        else byName.set(s.name, [s]);
      }
    }
    for (const family of this.sampled.values()) family.reset();
    for (const [name, samples] of byName) {
      let family = this.sampled.get(name);
      if (!family) {
        const { help, type } = samples[0];
        const labelNames = [...new Set(samples.flatMap((s) => Object.keys(s.labels ?? {})))];
        const config = { name, help, labelNames, registers: [this.registry] };
        this.sampled.set(name, (family = type === 'counter' ? new Counter(config) : new Gauge(config)));
      }
      for (const s of samples) (family instanceof Counter ? family.inc.bind(family) : family.set.bind(family))(s.labels ?? {}, s.value);
    }
  }

  private stageFamilies(): void {
    const registers = [this.registry];
    new Counter({
      name: 'orchd_stage_seconds_total',
      help: 'Wall time spent in each stage of a write (ORCHD_STAGE_TIMING=1).',
      labelNames: ['stage'],
      registers,
      collect() {
        this.reset();
        for (const stage of STAGES) this.inc({ stage }, stageTotals(stage).ms / 1000);
      },
    });
    new Counter({
      name: 'orchd_stage_total',
      help: 'Times each stage of a write ran.',
      labelNames: ['stage'],
      registers,
      collect() {
        this.reset();
        for (const stage of STAGES) this.inc({ stage }, stageTotals(stage).count);
      },
    });
  }
}
