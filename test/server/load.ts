import { createHash } from 'node:crypto';
import type { Agent } from 'node:http';
import { request, type Reply } from './child.js';
import { eventually } from '../helpers/poll.js';

/*
 * Concurrent creates over HTTP keep-alive, bounded in count and time, that remember exactly what the
 * server acknowledged. Half the objects are Namespaces (cluster-scoped), half Events in `default`.
 * Each carries a digest of its own name, so an object read back whole and right can be told from a
 * half-written or mixed-up one.
 */

export type Kind = 'namespace' | 'event';

export interface Acked {
  kind: Kind;
  name: string;
  uid: string;
  resourceVersion: string;
}

export const PAYLOAD = 'orchd.test/payload';
export const payloadOf = (name: string) => createHash('sha256').update(name).digest('hex').slice(0, 32);

export const pathOf = (kind: Kind, name?: string) => (kind === 'namespace' ? '/api/v1/namespaces' : '/apis/events.orch.io/v1/namespaces/default/events') + (name ? `/${name}` : '');

export function bodyOf(kind: Kind, name: string): unknown {
  const metadata = { name, labels: { 'orchd.test/load': 'yes' }, annotations: { [PAYLOAD]: payloadOf(name) } };
  if (kind === 'namespace') return { apiVersion: 'v1', kind: 'Namespace', metadata };
  return {
    apiVersion: 'events.orch.io/v1',
    kind: 'Event',
    metadata,
    eventTime: new Date().toISOString().replace('Z', '000Z'),
    reportingController: 'orch.io/load-test',
    reportingInstance: 'load-test-1',
    action: 'Create',
    reason: 'Load',
    type: 'Normal',
    regarding: { apiVersion: 'v1', kind: 'Namespace', name: 'default' },
    note: `created by client load as ${name}`,
  };
}

export interface Load {
  /** Every 201, in the order the answers came. */
  acked: Acked[];
  /** Answers other than 201 (status and reason), e.g. 503 while shutting down. */
  refused: { kind: Kind; name: string; status: number; reason?: string; message?: string }[];
  /** Requests that got no answer at all (the connection died). */
  failed: number;
  /** Stops the clients after their current request. */
  stop(): void;
  /** Settles when every client stopped: a client stops at its first failed request. */
  done: Promise<void>;
}

/**
 * `clients` loops, each creating up to `perClient` objects named `<prefix>-<client>-<i>` until
 * maxMs has passed, stop() is called, or its connection fails.
 */
export function startLoad(o: { agent: Agent; url: string; prefix: string; clients: number; perClient: number; maxMs: number }): Load {
  const load: Load = { acked: [], refused: [], failed: 0, stop: () => (stopped = true), done: Promise.resolve() };
  let stopped = false;
  const deadline = Date.now() + o.maxMs;
  const client = async (c: number) => {
    for (let i = 0; i < o.perClient && !stopped && Date.now() < deadline; i++) {
      const kind: Kind = (c + i) % 2 === 0 ? 'namespace' : 'event';
      const name = `${o.prefix}-${c}-${i}`;
      let r: Reply;
      try {
        r = await request(o.agent, o.url, 'POST', pathOf(kind), bodyOf(kind, name));
      } catch {
        load.failed++;
        return;
      }
      if (r.status === 201) load.acked.push({ kind, name, uid: r.body.metadata.uid, resourceVersion: r.body.metadata.resourceVersion });
      else load.refused.push({ kind, name, status: r.status, reason: r.body?.reason, message: r.body?.message });
    }
  };
  load.done = Promise.all(Array.from({ length: o.clients }, (_, c) => client(c))).then(() => undefined);
  return load;
}

/** Resolves once at least n creates were acknowledged (or rejects after ms). */
export async function untilAcked(load: Load, n: number, ms = 20_000): Promise<void> {
  await eventually(() => load.acked.length >= n, { timeoutMs: ms, stepMs: 10, what: () => `${n} creates acknowledged (${load.acked.length} so far)` });
}
