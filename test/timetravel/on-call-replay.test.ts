import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputLine } from '../helpers/child-lines.js';
import { knockUntil } from '../helpers/knock.js';
import { eventually } from '../helpers/poll.js';
import { reconciler } from '../helpers/reconciler.js';
import { call } from '../helpers/server.js';
import { builtCli, killAll, spawnCli } from '../server/child.js';
import { EVENTS } from '../watch/objects.js';
import { HttpWatch } from '../watch/stream.js';
import { eventInformer, run } from './helpers.js';
import { ALERTS, LABELLED, NS, recordIncident, type Incident } from './on-call-scenario.js';

/*
 * The on-call incident (./on-call-scenario.ts) replayed by the built `orchd replay`, as the engineer
 * did it (issue 41 items 3 and 4): held for a controller whose kind the recording defines after it
 * starts, the replay says so on stderr with the --from way out; forked just before janitor's deletes
 * with a fixed janitor attached to the replay, the controller goes on against the fork, never
 * restarted: its watch ends with 410 at the fork, it lists the fork's state and acts on it, and the
 * port never refuses a connection through the switch.
 */

let incident: Incident;
let cli: string;

beforeAll(async () => {
  [incident, cli] = await Promise.all([recordIncident(), builtCli()]);
}, 300_000);

afterAll(async () => {
  await killAll();
  await incident?.server.close();
});

describe('the on-call incident, replayed', () => {
  it('held for a watcher while the recording starts before the Alert kind: says on stderr what it waits for; --from gets out', async () => {
    const { recording, alertsCrd, alert } = incident;
    const held = spawnCli(cli, ['replay', recording, '--speed', 'max', '--watchers', '1'], { lifeMs: 60_000 });
    const [, url, initial] = await outputLine(held, /^serving (\S+): the state at resourceVersion (\d+)/m);
    // The alerts controller lists its kind first: 404, so it never opens its watch.
    expect((await call(url, 'GET', ALERTS)).status).toBe(404);
    const [said] = await outputLine(held, /^orchd replay: waiting .*$/m, { stream: 'stderr', ms: 20_000 });
    expect(said).toBe(
      `orchd replay: waiting for 1 watch to open before the first entry (0 open); the recording creates CustomResourceDefinitions after it starts (alerts.oncall.example.com at ${alertsCrd}): a controller's list of such a kind is answered 404 until then and it never watches; --from ${alertsCrd + 1} starts the replay with them served`,
    );
    // Nothing was replayed meanwhile: the state served is the one before the first entry.
    expect((await call(url, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion).toBe(initial);
    held.signal('SIGTERM');
    await held.exited;
    // As said: from there the kind is served at once, the controller's list and watch go through, and the replay goes on to the end.
    const out = spawnCli(cli, ['replay', recording, '--speed', 'max', '--watchers', '1', '--from', String(alertsCrd + 1)], { lifeMs: 60_000 });
    const [, fromUrl] = await outputLine(out, /^serving (\S+): the state at resourceVersion (\d+)/m);
    const list = await call(fromUrl, 'GET', ALERTS);
    expect([list.status, list.body.items]).toEqual([200, []]);
    const watch = await HttpWatch.open(fromUrl, `${ALERTS}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`);
    await watch.until((es) => es.some((e) => e.type === 'ADDED'), 'the Alert replayed');
    expect(watch.changes().map((e) => `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`)).toEqual([`ADDED events-flood ${alert}`]);
    expect(await out.exited).toEqual({ code: 0, signal: null });
    expect(out.output.stderr).not.toMatch(/waiting/);
    expect(out.output.stdout).toMatch(new RegExp(`entries ${alertsCrd + 1}\\.\\.${incident.head}`));
    // The way out is in the command's help too.
    expect((await run('replay', '--help')).out.replace(/\s+/g, ' ')).toContain("never watches: give --from after the CRD's creation");
  }, 120_000);

  it("a fixed janitor attached during the replay acts on the fork's state after POST /fork: no restart, 410 at the fork, no ECONNREFUSED", async () => {
    const { recording, work, deleted, labelled, eventsAt } = incident;
    // Forked just before janitor's first delete: the fixed janitor deletes the triaged Events, and only those.
    const pauseAt = Math.min(...deleted.values()) - 1;
    const dir = join(work, 'fixed-janitor');
    const child = spawnCli(cli, ['replay', recording, '--speed', 'max', '--pause-at', String(pauseAt), '--fork', dir, '--control-port', '0'], { lifeMs: 180_000 });
    const [, url] = await outputLine(child, /^serving (\S+):/m);
    const [, controls] = await outputLine(child, /^controls at (\S+): .*\/fork/m);
    const watcher = eventInformer(url, NS);
    const writes = reconciler(watcher.informer, async (o) =>
      o.metadata?.labels?.triaged === 'yes' ? (await call(url, 'DELETE', `${EVENTS}/namespaces/${NS}/events/${o.metadata.name}`, undefined, { 'User-Agent': 'fixed-janitor/2.0' })).status : undefined,
    );
    await watcher.informer.start();
    const status = async () => (await (await fetch(`${controls}/status`)).json()) as { paused: boolean; at: number };
    await eventually(
      async () => {
        const s = await status();
        return s.paused && s.at === pauseAt;
      },
      { what: `the replay paused at ${pauseAt}`, timeoutMs: 60_000 },
    );
    const atFork = eventsAt(pauseAt);
    await eventually(() => watcher.informer.list().length === atFork.size && writes.length >= LABELLED, { what: "the janitor's view of the replay and its tries", timeoutMs: 30_000 });
    // The replay is read-only: each of its deletes was refused.
    expect(new Set(writes)).toEqual(new Set(['403']));
    const before = writes.length;
    const watch = await HttpWatch.open(url, `${EVENTS}/namespaces/${NS}/events?watch=true&resourceVersion=${pauseAt}`);
    const knocks = knockUntil(url);
    const forked = await fetch(`${controls}/fork`, { method: 'POST' });
    expect([forked.status, await forked.json()]).toEqual([200, { forked: dir, at: pauseAt, url }]);
    await outputLine(child, new RegExp(`^serving the fork ${dir} at ${url}, writable`, 'm'));
    const answers = await knocks.stop();
    expect(answers).toEqual({ 200: expect.any(Number) });
    // A watch of the replay ends at the fork with 410 Expired: its client lists again.
    await watch.ended();
    expect(watch.changes().map((e) => [e.type, e.object.code, e.object.reason])).toEqual([['ERROR', 410, 'Expired']]);
    // The janitor, never restarted, lists the fork and deletes there what it should: the triaged Events, no other.
    const untriaged = [...atFork.keys()].filter((n) => !labelled.has(n)).sort();
    const names = async () => ((await call(url, 'GET', `${EVENTS}/namespaces/${NS}/events`)).body.items as any[]).map((o) => o.metadata.name as string).sort();
    let left = 0;
    const tally = () => JSON.stringify(writes.slice(before).reduce((a: Record<string, number>, w) => ({ ...a, [w]: (a[w] ?? 0) + 1 }), {}));
    await eventually(async () => (left = (await names()).length) === untriaged.length, {
      what: () => `the triaged Events deleted on the fork (${left} Events, ${untriaged.length} untriaged; the janitor's writes since the fork: ${tally()})`,
      timeoutMs: 30_000,
    });
    expect(await names()).toEqual(untriaged);
    expect(writes.slice(before)).toEqual(Array(LABELLED).fill('200'));
    await eventually(() => watcher.informer.list().length === untriaged.length, { what: "the janitor's cache at the fork's state" });
    expect(
      watcher.informer
        .list()
        .map((o) => o.metadata!.name!)
        .sort(),
    ).toEqual(untriaged);
    // The fork goes its own way: an Event triaged there is seen by the same informer and deleted by the janitor.
    const one = untriaged[0];
    const patched = await call(url, 'PATCH', `${EVENTS}/namespaces/${NS}/events/${one}`, { metadata: { labels: { triaged: 'yes' } } }, { 'Content-Type': 'application/merge-patch+json' });
    expect(patched.status).toBe(200);
    await eventually(() => watcher.seen.some((s) => s.startsWith(`DELETED ${NS}/${one} `)), { what: `the janitor's delete of ${one} seen` });
    expect((await call(url, 'GET', `${EVENTS}/namespaces/${NS}/events/${one}`)).status).toBe(404);
    expect(watcher.errors).toEqual([]);
    await watcher.informer.stop();
    child.signal('SIGTERM');
    expect((await child.exited).code).toBe(0);
  }, 180_000);
});
