/** Objects the watch tests write: namespaced Events and cluster-scoped Namespaces. */
import { call } from '../helpers/server.js';

export const EVENTS = '/apis/events.orch.io/v1';

export function event(name: string, namespace = 'default', labels?: Record<string, string>, note = 'hello'): any {
  return {
    apiVersion: 'events.orch.io/v1',
    kind: 'Event',
    metadata: { name, namespace, ...(labels ? { labels } : {}) },
    eventTime: '2026-01-02T03:04:05.123456Z',
    reportingController: 'orch.io/test',
    reportingInstance: 'test-1',
    action: 'Testing',
    reason: 'Watched',
    regarding: { kind: 'Pod', namespace, name: 'web-1', apiVersion: 'v1' },
    note,
    type: 'Normal',
  };
}

/** Creates an Event through the API; returns its resourceVersion as a number. */
export async function createEvent(base: string, name: string, namespace = 'default', labels?: Record<string, string>): Promise<number> {
  const r = await call(base, 'POST', `${EVENTS}/namespaces/${namespace}/events`, event(name, namespace, labels));
  if (r.status !== 201) throw new Error(`create ${namespace}/${name}: ${r.status} ${r.text}`);
  return Number(r.body.metadata.resourceVersion);
}

export async function createNamespace(base: string, name: string, labels?: Record<string, string>): Promise<number> {
  const r = await call(base, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(labels ? { labels } : {}) } });
  if (r.status !== 201) throw new Error(`create namespace ${name}: ${r.status} ${r.text}`);
  return Number(r.body.metadata.resourceVersion);
}

/** Sets an Event's labels (null removes one) by get + replace; returns the new resourceVersion. */
export async function labelEvent(base: string, name: string, labels: Record<string, string | null>, namespace = 'default'): Promise<number> {
  const path = `${EVENTS}/namespaces/${namespace}/events/${name}`;
  const got = await call(base, 'GET', path);
  if (got.status !== 200) throw new Error(`get ${namespace}/${name}: ${got.status} ${got.text}`);
  const obj = got.body;
  const next: Record<string, string> = { ...(obj.metadata.labels ?? {}) };
  for (const [k, v] of Object.entries(labels)) {
    if (v === null) delete next[k];
    else next[k] = v;
  }
  obj.metadata.labels = next;
  const r = await call(base, 'PUT', path, obj);
  if (r.status !== 200) throw new Error(`replace ${namespace}/${name}: ${r.status} ${r.text}`);
  return Number(r.body.metadata.resourceVersion);
}

export async function deleteEvent(base: string, name: string, namespace = 'default'): Promise<void> {
  const r = await call(base, 'DELETE', `${EVENTS}/namespaces/${namespace}/events/${name}`);
  if (r.status !== 200) throw new Error(`delete ${namespace}/${name}: ${r.status} ${r.text}`);
}

/** The newest version the server has applied: a list's resourceVersion. */
export async function currentVersion(base: string): Promise<number> {
  const r = await call(base, 'GET', `${EVENTS}/events?limit=1`);
  return Number(r.body.metadata.resourceVersion);
}
