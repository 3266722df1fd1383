/**
 * An example controller written with @kubernetes/client-node informers, the way a controller for
 * kube-apiserver is written: it labels every Event with its reason (`example.com/reason`, so a label
 * selector finds them), and keeps a summary of each namespace's Events by reason as an annotation
 * of the Namespace (`example.com/event-reasons: {"BackOff":2,"Started":1}`).
 *
 * Its tests (controller.test.ts) run it against orchd started in the test process.
 */
import { KubernetesObjectApi, PatchStrategy, makeInformer, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';

export const REASON_LABEL = 'example.com/reason';
export const SUMMARY_ANNOTATION = 'example.com/event-reasons';
const MANAGER = 'event-reasons';

interface Event extends KubernetesObject {
  reason?: string;
}

/** A label value can hold at most 63 characters of [A-Za-z0-9_.-], starting and ending alphanumeric. */
export function reasonLabel(reason: string | undefined): string {
  const v = (reason ?? '')
    .replace(/[^A-Za-z0-9_.-]/g, '_')
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  return v || 'none';
}

export interface Controller {
  /** Resolves once the informer has listed and the controller has caught up with what it found. */
  readonly synced: Promise<void>;
  stop(): Promise<void>;
}

export function startEventReasons(kc: KubeConfig): Controller {
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const informer = makeInformer<Event>(kc, '/apis/events.orch.io/v1/events', () => objects.list('events.orch.io/v1', 'Event') as Promise<KubernetesListObject<Event>>);
  const written = new Map<string, string>();
  let stopped = false;

  const patch = (spec: KubernetesObject) => objects.patch(spec, undefined, undefined, MANAGER, undefined, PatchStrategy.MergePatch);

  const label = async (ev: Event) => {
    const want = reasonLabel(ev.reason);
    if (ev.metadata?.labels?.[REASON_LABEL] === want) return;
    await patch({ apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: ev.metadata!.name, namespace: ev.metadata!.namespace, labels: { [REASON_LABEL]: want } } });
  };

  /** The namespace's counts from the informer's cache, written when they changed. */
  const summarize = async (namespace: string) => {
    const counts: Record<string, number> = {};
    for (const ev of informer.list(namespace)) counts[ev.reason ?? ''] = (counts[ev.reason ?? ''] ?? 0) + 1;
    const summary = JSON.stringify(Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b))));
    if (written.get(namespace) === summary) return;
    await patch({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, annotations: { [SUMMARY_ANNOTATION]: summary } } });
    written.set(namespace, summary);
  };

  // One change at a time, in order: each handler's writes finish before the next change is looked at.
  let queue = Promise.resolve();
  const handle = (ev: Event, deleted = false) => {
    queue = queue.then(async () => {
      if (stopped) return;
      try {
        if (!deleted) await label(ev);
        await summarize(ev.metadata!.namespace!);
      } catch (err) {
        // Gone meanwhile (404): nothing to do. Anything else (a conflict, a throttled request, an
        // answer lost with the connection: faults.test.ts injects each) is tried again shortly, as a
        // work queue requeues: a failure thrown here would stop every later change from being handled.
        if (!isGone(err) && !stopped) setTimeout(() => handle(ev, deleted), 50);
      }
    });
  };
  informer.on('add', (ev) => handle(ev));
  informer.on('update', (ev) => handle(ev));
  informer.on('delete', (ev) => handle(ev, true));
  // A failed list or watch: start again after a pause, as controller-runtime's informers back off.
  informer.on('error', () => {
    if (!stopped) setTimeout(() => void informer.start().catch(() => undefined), 100);
  });
  // The cache after a relist can differ from the summaries written (a reset of the server): forget them.
  informer.on('connect', () => written.clear());

  const synced = informer.start().then(() => queue);
  return {
    synced,
    async stop() {
      stopped = true;
      await informer.stop();
      await queue.catch(() => undefined);
    },
  };
}

function isGone(err: unknown): boolean {
  return (err as { code?: number }).code === 404;
}
