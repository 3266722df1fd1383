/**
 * apiserver_watch_events_total and apiserver_watch_events_sizes, as kube-apiserver counts them: each
 * event sent to each watcher, by the group, version and kind watched. A thousand watchers of one
 * write are a thousand events, so the count is a plain add into the watched kind's tally, and
 * prom-client's families read the tallies at scrape time (its observe costs ~0.5 µs with labels:
 * half a second of CPU per second at a million sends).
 */
import { Counter, Histogram, type Registry } from 'prom-client';

/** Kubernetes' buckets: 1 KiB to 128 KiB, doubling. */
const SIZE_BUCKETS = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072];
const LABELS = ['group', 'version', 'kind'] as const;
const SIZES = 'apiserver_watch_events_sizes';
const SIZES_HELP = 'Watch event size distribution in bytes.';
type Label = (typeof LABELS)[number];

/** What one kind's watchers were sent. */
export class WatchEventTally {
  events = 0;
  bytes = 0;
  /** Events per size bucket (not cumulative), the last one for bigger than every bound. */
  readonly buckets = new Float64Array(SIZE_BUCKETS.length + 1);

  constructor(readonly labels: Readonly<Record<Label, string>>) {}

  /** One event of `size` bytes sent to one watcher. */
  sent(size: number): void {
    this.events++;
    this.bytes += size;
    let i = 0;
    while (i < SIZE_BUCKETS.length && size > SIZE_BUCKETS[i]) i++;
    this.buckets[i]++;
  }
}

/** The sizes histogram, its samples made from the tallies when the registry asks for them. */
class TalliedSizes extends Histogram<Label> {
  constructor(
    registry: Registry,
    private readonly tallies: () => Iterable<WatchEventTally>,
  ) {
    super({ name: SIZES, help: SIZES_HELP, labelNames: LABELS, buckets: SIZE_BUCKETS, registers: [registry] });
  }

  /**
   * What prom-client's registry reads for the text format (it prefers this to get(), and its get()
   * reads it too): the family, with the tallies' samples in place of observations.
   */
  async getForPromString() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const t of this.tallies()) {
      let cumulative = 0;
      for (let i = 0; i <= SIZE_BUCKETS.length; i++) {
        cumulative += t.buckets[i];
        const le = i < SIZE_BUCKETS.length ? SIZE_BUCKETS[i] : '+Inf';
        values.push({ labels: { ...t.labels, le }, value: cumulative, metricName: `${SIZES}_bucket` });
      }
      values.push({ labels: t.labels, value: t.bytes, metricName: `${SIZES}_sum` }, { labels: t.labels, value: t.events, metricName: `${SIZES}_count` });
    }
    return { name: SIZES, help: SIZES_HELP, type: 'histogram', aggregator: 'sum', values };
  }
}

/** The tallies of one server, by kind, and the two families that publish them. */
export class WatchEventCounts {
  private readonly tallies = new Map<string, WatchEventTally>();

  constructor(registry: Registry) {
    const tallies = () => this.tallies.values();
    new Counter({
      name: 'apiserver_watch_events_total',
      help: 'Number of events sent in watch clients.',
      labelNames: LABELS,
      registers: [registry],
      collect() {
        this.reset();
        for (const t of tallies()) this.inc(t.labels, t.events);
      },
    });
    new TalliedSizes(registry, tallies);
  }

  /** The tally a watch of this kind adds its events to (taken once per watch). */
  of(group: string, version: string, kind: string): WatchEventTally {
    const key = `${group}/${version}/${kind}`;
    let t = this.tallies.get(key);
    if (!t) this.tallies.set(key, (t = new WatchEventTally({ group, version, kind })));
    return t;
  }
}
