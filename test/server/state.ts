import type { Agent } from 'node:http';
import { expect } from 'vitest';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import { request } from './child.js';
import { PAYLOAD, payloadOf, type Acked } from './load.js';

export interface Served {
  /** The lists' resourceVersion: the newest sequence the server's view has applied. */
  listVersion: number;
  /** `<kind>/<name>` → the object as served. */
  objects: Map<string, any>;
}

/** Every Namespace and every Event (all namespaces) the server holds, and the default RBAC policy it creates at start. */
export async function readServed(agent: Agent, url: string): Promise<Served> {
  const objects = new Map<string, any>();
  let listVersion = 0;
  for (const [kind, path] of [
    ['namespace', '/api/v1/namespaces'],
    ['event', '/apis/events.orch.io/v1/events'],
    ['clusterrole', '/apis/rbac.authorization.orch.io/v1/clusterroles'],
    ['clusterrolebinding', '/apis/rbac.authorization.orch.io/v1/clusterrolebindings'],
  ] as const) {
    const r = await request(agent, url, 'GET', path);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    listVersion = Math.max(listVersion, Number(r.body.metadata.resourceVersion));
    for (const o of r.body.items) objects.set(`${kind}/${o.metadata.name}`, o);
  }
  return { listVersion, objects };
}

/**
 * What an acknowledgement promises, checked against a server that only ever created (no update, no
 * delete): every acknowledged object is there with its uid and resourceVersion; the objects'
 * resourceVersions are exactly 1..listVersion, one each (the log is contiguous and every entry is one
 * object); every object is whole (its payload matches its name).
 */
export function expectCreatesOnly(served: Served, acked: readonly Acked[]): void {
  const missing: string[] = [];
  const changed: string[] = [];
  for (const a of acked) {
    const o = served.objects.get(`${a.kind}/${a.name}`);
    if (!o) missing.push(`${a.kind}/${a.name}@${a.resourceVersion}`);
    else if (o.metadata.uid !== a.uid || o.metadata.resourceVersion !== a.resourceVersion) changed.push(a.name);
  }
  expect(missing, 'acknowledged creates lost').toEqual([]);
  expect(changed, 'acknowledged creates changed').toEqual([]);

  const versions = [...served.objects.values()].map((o) => Number(o.metadata.resourceVersion)).sort((a, b) => a - b);
  expect(versions).toEqual(Array.from({ length: served.listVersion }, (_, i) => i + 1));

  const broken: string[] = [];
  for (const [id, o] of served.objects) {
    const name: string = o.metadata.name;
    const ours = o.metadata.annotations?.[PAYLOAD] !== undefined;
    const whole =
      typeof o.metadata.uid === 'string' &&
      typeof o.metadata.creationTimestamp === 'string' &&
      (!ours || (o.metadata.annotations[PAYLOAD] === payloadOf(name) && o.metadata.labels?.['orchd.test/load'] === 'yes')) &&
      (!id.startsWith('event/') || o.note === `created by client load as ${name}`);
    if (!whole) broken.push(id);
  }
  expect(broken, 'objects not whole').toEqual([]);
}

/** Reads the stopped server's log directly: every entry decodes and the seqs run 1..lastSeq. */
export async function expectContiguousLog(path: string): Promise<number> {
  const log = new LevelDbLog({ path });
  await log.open();
  try {
    expect(log.firstSeq).toBe(1);
    let next = 1;
    for await (const page of log.read(1)) {
      for (const e of page) {
        expect(e.seq).toBe(next++);
        expect(Number((e.value as any).metadata.resourceVersion)).toBe(e.seq);
      }
    }
    expect(next - 1).toBe(log.lastSeq);
    return log.lastSeq;
  } finally {
    await log.close();
  }
}
