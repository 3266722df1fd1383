/**
 * The on-call engineer's incident (issues 31 and 41), written through a real server with its data
 * folder, an audit log and a recording of the whole history, for the on-call-*.test.ts files: an
 * Alert kind defined (its CRD created after the history starts), 1,825 Events created, 275 more
 * refused by a policy that rollout-bot changed midway, 250 labelled, 200 deleted by janitor, and a
 * namespace deleted with an Event in it. What each write answered is kept, to check the commands by.
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import { crdOf } from '../helpers/crd.js';
import { eventually, sleep } from '../helpers/poll.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';
import { EVENTS, createNamespace, event } from '../watch/objects.js';
import { run } from './helpers.js';

export const NS = 'prod';
export const ADM = '/apis/admissionregistration.orch.io/v1';
export const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions';
export const ALERTS = `/apis/oncall.example.com/v1/namespaces/${NS}/alerts`;
export const FIRST = 1000;
export const SECOND = 825;
export const REFUSED = 275;
export const LABELLED = 250;
export const DELETED = 200;

export interface Incident {
  server: TestServer;
  work: string;
  recording: string;
  auditLog: string;
  /** The three places each question is asked of: the server, its folder, the recording. */
  sources: [string, string][];
  /** Each Event's version as created, labelled, and deleted (the delete's own version, from the log). */
  created: Map<string, number>;
  labelled: Map<string, number>;
  deleted: Map<string, number>;
  policyCreated: number;
  policyChanged: number;
  /** The versions that created the alerts CRD and the one Alert. */
  alertsCrd: number;
  alert: number;
  /** Commit time of each version, from the folder's log. */
  timeOf: Map<number, number>;
  head: number;
  /** The version a time names: the newest committed at or before it. */
  versionAt(t: number): number;
  /** Each Event of the namespace at rv, with the version of it then. */
  eventsAt(rv: number): Map<string, number>;
}

const policy = (validations: object[]) => ({
  apiVersion: 'admissionregistration.orch.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name: 'event-guard' },
  spec: { matchConstraints: { resourceRules: [{ apiGroups: ['events.orch.io'], apiVersions: ['v1'], resources: ['events'], operations: ['CREATE'] }] }, validations },
});

/** Runs fn over items, `width` at a time. */
async function inBatches<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(fn));
}

const settle = () => sleep(30);

/** The alerts kind, defined after the history starts (a replay from its start has no such kind at first), and the Alert that paged. */
async function defineAlerts(url: string): Promise<{ alertsCrd: number; alert: number }> {
  const crd = await call(url, 'POST', CRDS, crdOf('oncall.example.com', 'alerts', 'Alert', { names: { singular: 'alert', listKind: 'AlertList' } }));
  expect(crd.status, crd.text).toBe(201);
  // Established (the server's status write) before anything else is written, so the versions after are the scenario's own.
  await eventually(async () => (await call(url, 'GET', `${CRDS}/alerts.oncall.example.com`)).body.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True'), {
    what: 'the alerts CRD Established',
  });
  const alert = await call(url, 'POST', ALERTS, { apiVersion: 'oncall.example.com/v1', kind: 'Alert', metadata: { name: 'events-flood' }, spec: { severity: 'page' } });
  expect(alert.status, alert.text).toBe(201);
  return { alertsCrd: Number(crd.body.metadata.resourceVersion), alert: Number(alert.body.metadata.resourceVersion) };
}

/** Writes the incident and records it; the server is left running (close it in afterAll). */
export async function recordIncident(): Promise<Incident> {
  const work = tempDir('orchd-on-call-');
  const auditLog = join(work, 'audit.log');
  const server = await startServer({ dataDir: join(work, 'data'), auditLogPath: auditLog });
  const created = new Map<string, number>();
  const labelled = new Map<string, number>();
  const deleted = new Map<string, number>();
  const createAll = async (names: string[], reason: (name: string) => string): Promise<number> => {
    let refusedHere = 0;
    await inBatches(names, 25, async (name) => {
      const r = await call(server.url, 'POST', `${EVENTS}/namespaces/${NS}/events`, { ...event(name, NS), reason: reason(name) });
      if (r.status === 201) created.set(name, Number(r.body.metadata.resourceVersion));
      else if (r.status === 422 && r.body.reason === 'Invalid') refusedHere++;
      else throw new Error(`create ${name}: ${r.status} ${r.text}`);
    });
    return refusedHere;
  };
  await createNamespace(server.url, NS);
  const { alertsCrd, alert } = await defineAlerts(server.url);
  const policyCreated = Number((await call(server.url, 'POST', `${ADM}/validatingadmissionpolicies`, policy([{ expression: "object.type in ['Normal', 'Warning']" }]))).body.metadata.resourceVersion);
  const binding = await call(server.url, 'POST', `${ADM}/validatingadmissionpolicybindings`, {
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: 'event-guard-b' },
    spec: { policyName: 'event-guard', validationActions: ['Deny'] },
  });
  expect(binding.status).toBe(201);
  expect(
    await createAll(
      Array.from({ length: FIRST }, (_, i) => `e${i}`),
      () => 'Started',
    ),
  ).toBe(0);
  await settle();
  // rollout-bot tightens the policy: BackOff Events are refused from now on.
  const current = (await call(server.url, 'GET', `${ADM}/validatingadmissionpolicies/event-guard`)).body;
  const changed = await call(server.url, 'PUT', `${ADM}/validatingadmissionpolicies/event-guard?fieldManager=rollout-bot`, {
    ...current,
    spec: { ...current.spec, validations: [...current.spec.validations, { expression: "object.reason != 'BackOff'", message: 'no BackOff' }] },
  });
  expect(changed.status).toBe(200);
  const policyChanged = Number(changed.body.metadata.resourceVersion);
  await settle();
  const second = Array.from({ length: SECOND + REFUSED }, (_, i) => `f${i}`);
  expect(await createAll(second, (name) => (Number(name.slice(1)) % 4 === 3 ? 'BackOff' : 'Started'))).toBe(REFUSED);
  await inBatches([...created.keys()].slice(0, LABELLED), 25, async (name) => {
    const r = await call(server.url, 'PATCH', `${EVENTS}/namespaces/${NS}/events/${name}`, { metadata: { labels: { triaged: 'yes' } } }, { 'Content-Type': 'application/merge-patch+json' });
    expect(r.status).toBe(200);
    labelled.set(name, Number(r.body.metadata.resourceVersion));
  });
  await inBatches([...created.keys()].slice(100, 100 + DELETED), 25, async (name) => {
    const r = await call(server.url, 'DELETE', `${EVENTS}/namespaces/${NS}/events/${name}`, undefined, { 'User-Agent': 'janitor/1.0' });
    expect(r.status).toBe(200);
    deleted.set(name, 0);
  });
  // A namespace deleted with an Event in it: the namespace controller (the server itself) deletes the Event.
  await createNamespace(server.url, 'scratch');
  expect((await call(server.url, 'POST', `${EVENTS}/namespaces/scratch/events`, event('left', 'scratch'))).status).toBe(201);
  expect((await call(server.url, 'DELETE', '/api/v1/namespaces/scratch')).status).toBe(200);
  // The namespace may be gone before the controller has deleted what it held: head is read once both are.
  const gone = async (path: string) => (await call(server.url, 'GET', path)).status === 404;
  await eventually(async () => (await gone('/api/v1/namespaces/scratch')) && (await gone(`${EVENTS}/namespaces/scratch/events/left`)), { what: 'the scratch namespace and its Event deleted' });
  const head = Number((await call(server.url, 'GET', `${EVENTS}/events?limit=1`)).body.metadata.resourceVersion);
  const timeOf = new Map<number, number>();
  const log = await run('log', '--data-dir', join(work, 'data'), '-o', 'json');
  for (const l of log.out
    .split('\n')
    .filter(Boolean)
    .map((x) => JSON.parse(x))) {
    timeOf.set(Number(l.resourceVersion), Date.parse(l.time));
    // A delete answers with the object's last state: the version of the delete itself is the log's.
    if (l.type === 'DELETED' && deleted.has(l.object.metadata.name)) deleted.set(l.object.metadata.name, Number(l.resourceVersion));
  }
  const recording = join(work, 'incident.orchlog');
  expect((await run('export', '--data-dir', join(work, 'data'), '--file', recording)).code).toBe(0);
  const versionAt = (t: number) => Math.max(...[...timeOf].filter(([, time]) => time <= t).map(([rv]) => rv));
  const eventsAt = (rv: number) => {
    const out = new Map<string, number>();
    for (const [name, c] of created) {
      if (c > rv || (deleted.get(name) ?? Infinity) <= rv) continue;
      const l = labelled.get(name);
      out.set(name, l !== undefined && l <= rv ? l : c);
    }
    return out;
  };
  const sources: [string, string][] = [
    ['--server', server.url],
    ['--data-dir', join(work, 'data')],
    ['--file', recording],
  ];
  return { server, work, recording, auditLog, sources, created, labelled, deleted, policyCreated, policyChanged, alertsCrd, alert, timeOf, head, versionAt, eventsAt };
}

export const iso = (ms: number): string => new Date(ms).toISOString();
