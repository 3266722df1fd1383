/**
 * The objects the scenarios write: Events (events.orch.io/v1) of about 1 KB of JSON, the size of the
 * ~1,041-byte values in research/baseline.md, so orchd, etcd and the ceilings carry the same bytes.
 */

export const EVENTS_GROUP = 'events.orch.io';
export const NAMESPACE = 'default';
export const eventsPath = (ns = NAMESPACE) => `/apis/${EVENTS_GROUP}/v1/namespaces/${ns}/events`;
/** Label every bench object carries; `group` spreads objects over GROUPS values for selective lists. */
export const GROUP_LABEL = 'bench.orch.io/group';
export const GROUPS = 100;

// Fixed filler (no randomness: runs must carry identical bytes); ~600 characters of note.
const NOTE = Array.from({ length: 12 }, (_, i) => `step ${i}: container image pulled, sandbox ready, probe ok;`)
  .join(' ')
  .slice(0, 640);

export interface EventBody {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; labels: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** A new Event named `name`, in group i % GROUPS; `sentAt` (ms, optional) travels in an annotation. */
export function eventBody(name: string, i: number, sentAt?: number): EventBody {
  return {
    apiVersion: `${EVENTS_GROUP}/v1`,
    kind: 'Event',
    metadata: {
      name,
      namespace: NAMESPACE,
      labels: { [GROUP_LABEL]: `g${i % GROUPS}`, app: 'orchd-bench' },
      ...(sentAt !== undefined ? { annotations: { 'bench.orch.io/sent-at': String(sentAt) } } : {}),
    },
    eventTime: '2026-01-01T00:00:00.000000Z',
    type: 'Normal',
    reason: 'Scheduled',
    action: 'Binding',
    reportingController: 'bench.orch.io/load-generator',
    reportingInstance: 'bench-load-generator-0',
    regarding: { apiVersion: 'v1', kind: 'Pod', namespace: NAMESPACE, name: `pod-${i}`, uid: '00000000-0000-4000-8000-000000000000', resourceVersion: '1' },
    note: NOTE,
  };
}

export const eventBytes = (name: string, i: number, sentAt?: number): Buffer => Buffer.from(JSON.stringify(eventBody(name, i, sentAt)));

/** Names unique to one harness run, so repeated runs against one server never collide. */
export function namer(prefix: string): (i: number) => string {
  const run = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;
  return (i) => `${prefix}-${run}-${i}`;
}
