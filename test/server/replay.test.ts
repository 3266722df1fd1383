import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_CLUSTER_ROLE_BINDINGS, BOOTSTRAP_CLUSTER_ROLES } from '../../src/controllers/rbac-bootstrap.js';
import { builtCli, isReady, keepAlive, killAll, request, spawnServer, type LogLine, type Reply } from './child.js';
import { bodyOf, pathOf, type Kind } from './load.js';
import { seedNamespaces } from './seed.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/poll.js';

/*
 * Startup: the server listens before it replays, says it is alive but not ready while the log is
 * replayed, tells how far the replay got, and comes up with the views rebuilt from the last
 * checkpoint and the log's tail: latest versions, deletions, and the per-key history all as before.
 */

const SEEDED = 30_000;
/** What a first start writes: the four system namespaces and the default RBAC cluster roles and bindings. */
const CREATED_AT_START = 4 + BOOTSTRAP_CLUSTER_ROLES.length + BOOTSTRAP_CLUSTER_ROLE_BINDINGS.length;
let root: string;
/** A data folder whose log holds SEEDED namespaces and no checkpoint; tests replay copies of it. */
let seeded: string;
beforeAll(async () => {
  root = tempDir('orchd-server-replay-');
  seeded = join(root, 'seeded');
  await Promise.all([builtCli(), seedNamespaces(join(seeded, 'log'), SEEDED)]);
}, 120_000);

async function copyOfSeeded(name: string): Promise<string> {
  const dir = join(root, name);
  await cp(seeded, dir, { recursive: true });
  return dir;
}
afterAll(async () => {
  await killAll();
});

describe('startup replay', () => {
  it('/livez is 200 and /readyz 500 while the log is replayed, with progress lines; then /readyz is 200', async () => {
    const dataDir = await copyOfSeeded('watched');

    const server = await spawnServer(dataDir);
    const agent = keepAlive(3);
    const seen: { livez: number; readyz: Reply; get: Reply }[] = [];
    // Polls from the `listening` line until ready, keeping every answer seen on the way.
    await eventually(
      async () => {
        const [livez, readyz, get] = await Promise.all([
          request(agent, server.url, 'GET', '/livez'),
          request(agent, server.url, 'GET', '/readyz'),
          request(agent, server.url, 'GET', '/api/v1/namespaces/seed-1'),
        ]);
        seen.push({ livez: livez.status, readyz, get });
        return readyz.status === 200;
      },
      { timeoutMs: 30_000, what: 'a ready replayed server' },
    );
    agent.destroy();
    const before = seen.filter((s) => s.readyz.status === 500);
    expect(before.length, 'no /readyz answer caught the replay').toBeGreaterThan(0);
    expect(seen.every((s) => s.livez === 200)).toBe(true);
    for (const s of before) expect(s.readyz.body).toContain('[-]readyz failed: the log is being replayed');
    // Not ready: resources are refused with a Status, not served from a half-built view.
    for (const s of before) expect(s.get).toMatchObject({ status: 503, body: { kind: 'Status', reason: 'ServiceUnavailable', code: 503 } });
    const last = seen[seen.length - 1];
    expect(last.readyz.status).toBe(200);
    expect(last.get.status).toBe(200);
    expect(last.get.body.metadata.name).toBe('seed-1');

    const ready = await server.waitForLine(isReady);
    const progress = server.lines.filter((l) => l.msg === 'replaying log');
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((l) => l.total === SEEDED)).toBe(true);
    const applied = progress.map((l) => Number(l.applied));
    expect(applied).toEqual([...applied].sort((a, b) => a - b));
    expect(progress[progress.length - 1]).toMatchObject({ applied: SEEDED, percent: 100 });
    expect(server.lines.indexOf(progress[progress.length - 1])).toBeLessThan(server.lines.indexOf(ready));
    // Refusing while not ready is expected: no error lines for it.
    expect(server.lines.filter((l) => l.level === 'error')).toEqual([]);
    // The seeded log had no system namespaces nor default RBAC policy: they are created once the views are rebuilt.
    expect(ready).toMatchObject({ seq: SEEDED + CREATED_AT_START, objects: SEEDED + CREATED_AT_START });
    server.signal('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  }, 90_000);

  it('SIGTERM during the replay stops the server at once, cleanly, and the next start replays in full', async () => {
    const dataDir = await copyOfSeeded('stopped');
    const server = await spawnServer(dataDir);
    server.signal('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.lines.some(isReady)).toBe(false);
    expect(server.lines.some((l) => l.msg === 'shutting down')).toBe(true);

    const again = await spawnServer(dataDir);
    expect(await again.waitForLine(isReady)).toMatchObject({ seq: SEEDED + CREATED_AT_START, objects: SEEDED + CREATED_AT_START });
    again.signal('SIGTERM');
    expect(await again.exited).toEqual({ code: 0, signal: null });
  }, 90_000);

  it('a restart serves from the checkpoint and the log tail: latest versions, deletions, past versions', async () => {
    const dataDir = join(root, 'restart');
    const agent = keepAlive(4);
    /** name → the newest acknowledged state; null once deleted. */
    const expected = new Map<string, { kind: Kind; obj: any } | null>();
    /** Versions read back later with resourceVersionMatch=Exact. */
    const history: { kind: Kind; name: string; obj: any }[] = [];
    let server = await spawnServer(dataDir);
    await server.waitForLine(isReady);
    const url = () => server.url;

    const create = async (kind: Kind, name: string) => {
      const r = await request(agent, url(), 'POST', pathOf(kind), bodyOf(kind, name));
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expected.set(name, { kind, obj: r.body });
      history.push({ kind, name, obj: r.body });
    };
    const update = async (name: string, label: string) => {
      const cur = expected.get(name)!;
      const obj = structuredClone(cur.obj);
      obj.metadata.labels.step = label;
      const r = await request(agent, url(), 'PUT', pathOf(cur.kind, name), obj);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.metadata.labels.step).toBe(label);
      expected.set(name, { kind: cur.kind, obj: r.body });
      history.push({ kind: cur.kind, name, obj: r.body });
    };
    const remove = async (name: string) => {
      const r = await request(agent, url(), 'DELETE', pathOf('event', name));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expected.set(name, null);
    };

    // Before the checkpoint: creates, updates, deletes.
    for (let i = 0; i < 30; i++) await create(i % 2 ? 'event' : 'namespace', `early-${i}`);
    for (let i = 0; i < 30; i += 3) await update(`early-${i}`, 'one');
    for (let i = 1; i < 30; i += 4) await remove(`early-${i}`);
    // SIGTERM: the server saves a checkpoint on its way out.
    server.signal('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });

    server = await spawnServer(dataDir);
    const second = await server.waitForLine(isReady);
    const checkpointSeq = Number(second.seq);
    expect(server.lines.some((l) => l.msg === 'replaying log')).toBe(false);
    // After it: more of each, touching objects from before the checkpoint too; then a crash, so the
    // next start has a tail to replay.
    for (let i = 0; i < 20; i++) await create(i % 2 ? 'event' : 'namespace', `late-${i}`);
    for (let i = 0; i < 30; i += 6) await update(`early-${i}`, 'two');
    for (let i = 0; i < 20; i += 5) await update(`late-${i}`, 'two');
    for (let i = 3; i < 30; i += 8) await remove(`early-${i}`);
    for (let i = 1; i < 20; i += 6) await remove(`late-${i}`);
    const tailEnd = Math.max(...history.map((h) => Number(h.obj.metadata.resourceVersion)), checkpointSeq);
    server.signal('SIGKILL');
    await server.exited;

    server = await spawnServer(dataDir);
    const third = await server.waitForLine(isReady);
    const progress = server.lines.filter((l): l is LogLine & { applied: number; total: number } => l.msg === 'replaying log');
    // Only the tail is replayed: the checkpoint held everything up to checkpointSeq.
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[progress.length - 1]).toMatchObject({ applied: Number(third.seq) - checkpointSeq, total: Number(third.seq) - checkpointSeq });
    expect(Number(third.seq)).toBeGreaterThanOrEqual(tailEnd);

    for (const [name, want] of expected) {
      const kind = want?.kind ?? 'event';
      const r = await request(agent, url(), 'GET', pathOf(kind, name));
      if (want === null) {
        expect(r.status, name).toBe(404);
        continue;
      }
      expect(r.status, name).toBe(200);
      expect(r.body, name).toEqual(want.obj);
    }
    // The lists hold exactly what is left, no more.
    for (const kind of ['namespace', 'event'] as const) {
      const r = await request(agent, url(), 'GET', pathOf(kind));
      const names = (r.body.items as any[]).map((o) => o.metadata.name).filter((n: string) => /^(early|late)-/.test(n));
      const want = [...expected].filter(([, v]) => v?.kind === kind).map(([n]) => n);
      expect(names.sort()).toEqual(want.sort());
    }
    // Every past version is still readable at its resourceVersion: the key index survived the checkpoint.
    for (const h of history) {
      const rv = h.obj.metadata.resourceVersion;
      const r = await request(agent, url(), 'GET', `${pathOf(h.kind, h.name)}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
      expect(r.status, `${h.name}@${rv}`).toBe(200);
      expect(r.body, `${h.name}@${rv}`).toEqual(h.obj);
    }
    agent.destroy();
    server.signal('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  }, 60_000);
});
