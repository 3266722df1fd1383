import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { call, type TestServer } from '../helpers/server.js';
import { builtCli } from '../server/child.js';
import { run, type Run } from './helpers.js';
import { jsonLines } from '../helpers/json-lines.js';
import { DELETED, FIRST, LABELLED, NS, REFUSED, SECOND, iso, recordIncident, type Incident } from './on-call-scenario.js';

/*
 * The on-call engineer's incident (issues 31 and 41, ./on-call-scenario.ts), through the orchd
 * command, against the running server, its data folder and a recording of it. Each question is
 * asked of all three; the three answers must be the same, and the answer must be what the test knows
 * it wrote. The timeline page on it is on-call-timeline.test.ts; its replay and fork, on-call-replay.test.ts.
 */

let server: TestServer;
let work: string;
let recording: string;
let auditLog: string;
let sources: Incident['sources'];
let created: Incident['created'];
let labelled: Incident['labelled'];
let deleted: Incident['deleted'];
let policyCreated: number;
let policyChanged: number;
let timeOf: Incident['timeOf'];
let head: number;
let versionAt: Incident['versionAt'];
let eventsAt: Incident['eventsAt'];

beforeAll(async () => {
  ({ server, work, recording, auditLog, sources, created, labelled, deleted, policyCreated, policyChanged, timeOf, head, versionAt, eventsAt } = await recordIncident());
}, 300_000);

afterAll(async () => {
  await server?.close();
});

/** The command against the server, the folder and the recording: the same answer from each (with exit status code), which is returned. */
async function askFor(code: number, command: string, ...args: string[]): Promise<Run> {
  const answers = await Promise.all(sources.map(([flag, source]) => run(command, flag, source, ...args)));
  for (const [i, a] of answers.entries()) expect({ source: sources[i][0], code: a.code, err: a.err }).toEqual({ source: sources[i][0], code, err: answers[0].err });
  for (const a of answers.slice(1)) expect(a.out).toBe(answers[0].out);
  return answers[0];
}

const ask = (command: string, ...args: string[]): Promise<Run> => askFor(0, command, ...args);

describe('the on-call scenario', () => {
  it('wrote what it says: 2,300 entries or so, 275 refused', () => {
    expect(created.size).toBe(FIRST + SECOND);
    expect([...deleted.values()].every((rv) => rv > 0)).toBe(true);
    expect(head).toBeGreaterThan(FIRST + SECOND + LABELLED + DELETED);
    expect(timeOf.size).toBe(head);
  });

  it('what did the policy say at T, and at a time after the change', async () => {
    const before = timeOf.get(policyChanged - 1)!;
    const at = await ask('state', '--at', iso(before), 'vap/event-guard', '-o', 'yaml');
    expect(at.err).toBe(`orchd: --at ${iso(before)} is resourceVersion ${versionAt(before)}, committed at ${iso(timeOf.get(versionAt(before))!)}\n`);
    const then = parseYaml(at.out);
    expect(then.metadata.resourceVersion).toBe(String(versionAt(before)));
    expect(then.items.map((p: any) => [p.metadata.resourceVersion, p.spec.validations.map((v: any) => v.expression)])).toEqual([[String(policyCreated), ["object.type in ['Normal', 'Warning']"]]]);
    expect(then.items[0].metadata.managedFields).toBeUndefined();
    const after = parseYaml((await ask('state', '--at', iso(timeOf.get(policyChanged)!), 'validatingadmissionpolicies.v1.admissionregistration.orch.io/event-guard', '-o', 'yaml')).out);
    expect(after.items[0].spec.validations.map((v: any) => v.message ?? '')).toEqual(['', 'no BackOff']);
  });

  it('who changed it, and when', async () => {
    const versions = jsonLines((await ask('history', 'vap/event-guard', '-o', 'json-patch')).out);
    expect(versions.map((v) => [v.resourceVersion, v.type, v.time])).toEqual([
      [String(policyCreated), 'ADDED', iso(timeOf.get(policyCreated)!)],
      [String(policyChanged), 'MODIFIED', iso(timeOf.get(policyChanged)!)],
    ]);
    expect(versions.map((v) => [v.user, v.manager])).toEqual([
      ['system:anonymous', 'node (create)'],
      ['system:anonymous', 'rollout-bot (update)'],
    ]);
    expect(versions[1].patch).toContainEqual({ op: 'add', path: '/spec/validations/1', value: expect.objectContaining({ message: 'no BackOff' }) });
  });

  it("who deleted an Event, who made the controller's writes, and only what one manager or user did", async () => {
    const gone = [...deleted.keys()][7];
    const versions = jsonLines((await ask('history', `events/${gone}`, '-n', NS, '-o', 'json-patch')).out);
    expect(versions.map((v) => [v.type, v.user, v.manager])).toEqual([
      ['ADDED', 'system:anonymous', 'node (create)'],
      ...(labelled.has(gone) ? [['MODIFIED', 'system:anonymous', 'node (patch)']] : []),
      ['DELETED', 'system:anonymous', 'janitor (delete)'],
    ]);
    const left = jsonLines((await ask('history', 'events/left', '-n', 'scratch', '-o', 'json-patch')).out);
    expect(left.map((v) => [v.type, v.user, v.manager])).toEqual([
      ['ADDED', 'system:anonymous', 'node (create)'],
      // The namespace cleanup's delete: the system user's, no field manager, verb delete.
      ['DELETED', 'system:apiserver', '- (delete)'],
    ]);
    const byJanitor = jsonLines((await ask('log', '--manager', 'janitor', '-o', 'json')).out);
    expect(byJanitor.map((l) => l.type)).toEqual(Array(DELETED).fill('DELETED'));
    expect(byJanitor.map((l) => l.writer)).toEqual(Array(DELETED).fill({ user: 'system:anonymous', verb: 'delete', manager: 'janitor' }));
    const bySystem = jsonLines((await ask('log', '--user', 'system:apiserver', '--kind', 'events', '-o', 'json')).out);
    expect(bySystem.map((l) => `${l.type} ${l.object.metadata.namespace}/${l.object.metadata.name}`)).toEqual(['DELETED scratch/left']);
  });

  it('which Events existed at T', async () => {
    const t = timeOf.get([...deleted.values()].sort((a, b) => a - b)[DELETED / 2])!;
    const rv = versionAt(t);
    const state = jsonLines((await ask('state', '--at', iso(t), '--kind', 'ev', '-n', NS, '-o', 'json')).out);
    const expected = eventsAt(rv);
    expect(state.map((o) => `${o.metadata.name} ${o.metadata.resourceVersion}`)).toEqual([...expected].sort(([a], [b]) => (a < b ? -1 : 1)).map(([n, v]) => `${n} ${v}`));
    // The kind as kubectl takes it fully qualified, version and all: the same Events.
    const qualified = jsonLines((await ask('state', '--at', iso(t), '--kind', 'events.v1.events.orch.io', '-n', NS, '-o', 'json')).out);
    expect(qualified.map((o) => `${o.metadata.name} ${o.metadata.resourceVersion}`)).toEqual(state.map((o) => `${o.metadata.name} ${o.metadata.resourceVersion}`));
  });

  it("the timeline names each write's writer as orchd log does: user, verb, subresource and manager, deletes included", async () => {
    const [from, to] = [Math.min(...labelled.values()), head];
    const logged = jsonLines((await run('log', '--data-dir', join(work, 'data'), '--from', String(from), '--to', String(to), '-o', 'json')).out);
    const plotted = (await call(server.url, 'GET', `/debug/timeline/changes?from=${from}&to=${to}`)).body;
    expect(plotted.matched).toBe(logged.length);
    const asLogged = logged.map((l) => [Number(l.resourceVersion), l.writer?.user ?? null, l.writer?.verb ?? null, l.writer?.subresource ?? null, l.writer?.manager ?? null]);
    expect(plotted.changes.map((c: any) => [c.rv, c.user, c.verb, c.subresource, c.manager])).toEqual(asLogged);
    // The person's patches and the janitor's deletes, as they were made, not as managedFields tell.
    expect(plotted.changes.filter((c: any) => c.type === 'DELETED' && c.manager === 'janitor' && c.verb === 'delete')).toHaveLength(DELETED);
    expect(plotted.changes.filter((c: any) => c.verb === 'patch')).toHaveLength(LABELLED);
  });

  it('what changed between T1 and T2, as a summary and object by object', async () => {
    const [t1, t2] = [timeOf.get(policyChanged)!, timeOf.get(head)!];
    const [a, b] = [eventsAt(versionAt(t1)), eventsAt(versionAt(t2))];
    const added = [...b.keys()].filter((n) => !a.has(n)).length;
    const gone = [...a.keys()].filter((n) => !b.has(n)).length;
    const modified = [...b].filter(([n, v]) => a.has(n) && a.get(n) !== v).length;
    // The two sides differ: exit status 1, as diff(1) says it.
    const stat = (await askFor(1, 'diff', iso(t1), iso(t2), '--kind', 'events', '-n', NS, '--stat')).out.trim().split('\n');
    expect(stat.at(-1)!.trim()).toMatch(new RegExp(`^${added + gone + modified} objects changed: ${added} added, ${gone} deleted, ${modified} modified; \\d+ lines added, \\d+ removed$`));
    expect(stat).toHaveLength(added + gone + modified + 1);
    // A label added is that and nothing else: no metadata moved about, no managedFields.
    const one = [...labelled].find(([n, v]) => a.has(n) && a.get(n) !== v && b.get(n) === v && !deleted.has(n))![0];
    const d = (await askFor(1, 'diff', iso(t1), iso(t2), '--kind', 'events', '-n', NS)).out;
    const hunk = d.slice(d.indexOf(`events.events.orch.io/${NS}/${one}@`));
    const changedLines = hunk
      .slice(0, hunk.indexOf('\n---') === -1 ? undefined : hunk.indexOf('\n---'))
      .split('\n')
      .filter((l) => /^[-+] /.test(l));
    expect(changedLines.sort()).toEqual(['+  labels:', '+    triaged: yes', `+  resourceVersion: "${b.get(one)}"`, `-  resourceVersion: "${a.get(one)}"`].sort());
    // managedFields, left out by default, are diffed when asked for: the patch's manager now owns the label.
    expect(d).not.toMatch(/managedFields|f:triaged/);
    const withFields = (await askFor(1, 'diff', iso(t1), iso(t2), '--kind', 'events', '-n', NS, '--show-managed-fields')).out;
    expect(await askFor(0, 'diff', iso(t1), String(versionAt(t1)))).toMatchObject({ out: '' });
    const fieldsHunk = withFields.slice(withFields.indexOf(`events.events.orch.io/${NS}/${one}@`)).split('\n---')[0];
    expect(fieldsHunk.split('\n').filter((l) => /^\+ +f:triaged: \{\}$/.test(l))).toHaveLength(1);
  });

  it('the log of a span is the same from all three, times included, and the refused writes stand beside it', async () => {
    const span = await ask('log', '--from', String(policyChanged - 2), '--to', String(policyChanged + 20), '-o', 'json');
    const lines = jsonLines(span.out);
    expect(lines.map((l) => Number(l.resourceVersion))).toEqual(Array.from({ length: 23 }, (_, i) => policyChanged - 2 + i));
    expect(lines.every((l) => l.timeSource === 'log' && Date.parse(l.time) === timeOf.get(Number(l.resourceVersion)))).toBe(true);
    const withAudit = jsonLines((await ask('log', '--audit', auditLog, '--kind', 'events', '-n', NS, '-o', 'json')).out);
    const refused = withAudit.filter((l) => l.type === 'REFUSED');
    expect(refused).toHaveLength(REFUSED);
    expect(refused.every((r) => r.code === 422 && r.reason === 'Invalid' && r.verb === 'create' && /no BackOff/.test(r.message))).toBe(true);
    // The manager the refused request named (its User-Agent's product, as the server records it), not '-'.
    expect(new Set(refused.map((r) => r.manager))).toEqual(new Set(['node']));
    const table = (await ask('log', '--audit', auditLog, '--kind', 'events', '-n', NS, '--manager', 'node')).out;
    expect(table.split('\n').filter((l) => / REFUSED 422 /.test(l))).toHaveLength(REFUSED);
    expect(
      table
        .split('\n')
        .filter((l) => / REFUSED 422 /.test(l))
        .every((l) => /system:anonymous {3}node \(create\)$/.test(l)),
    ).toBe(true);
    // Each refusal after the policy changed, between the creates of its time.
    const firstRefused = withAudit.findIndex((l) => l.type === 'REFUSED');
    expect(Date.parse(withAudit[firstRefused].time)).toBeGreaterThanOrEqual(timeOf.get(policyChanged)!);
    expect(withAudit.slice(firstRefused).filter((l) => l.type === 'ADDED').length).toBeGreaterThan(0);
  });

  it('a time without its zone is refused, a time past the head is not written yet, from all three', async () => {
    for (const [flag, source] of sources) {
      const local = await run('state', flag, source, '--at', '2026-11-26T00:43:39');
      expect([local.code, local.err.split('\n')[0]]).toEqual([
        2,
        'orchd state: --at: "2026-11-26T00:43:39": a time must say its zone: 2026-11-26T00:43:39Z for UTC, or an offset such as 2026-11-26T00:43:39+02:00',
      ]);
      const diff = await run('diff', flag, source, '2026-11-26T00:43:39', '2026-11-26T00:43:40Z');
      expect([diff.code, diff.err.split('\n')[0]]).toEqual([
        2,
        'orchd diff: A: "2026-11-26T00:43:39": a time must say its zone: 2026-11-26T00:43:39Z for UTC, or an offset such as 2026-11-26T00:43:39+02:00',
      ]);
      const later = await run('state', flag, source, '--at', iso(timeOf.get(head)! + 60_000));
      expect([later.code, later.err]).toEqual([1, `orchd state: --at ${iso(timeOf.get(head)! + 60_000)}: not written yet: the newest version is ${head}, committed at ${iso(timeOf.get(head)!)}\n`]);
    }
  });

  it('the recording holds the whole history from the first entry, and --at 0 is before it, from all three', async () => {
    expect(jsonLines((await ask('log', '-o', 'json')).out).map((l) => Number(l.resourceVersion))).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    for (const [flag, source] of sources) {
      const zero = await run('state', flag, source, '--at', '0');
      expect({ flag, code: zero.code, out: zero.out, err: zero.err }).toEqual({ flag, code: 1, out: '', err: 'orchd state: --at 0: before the first entry: the oldest version is 1\n' });
    }
    const first = join(work, 'first.orchlog');
    const exported = await run('export', '--data-dir', join(work, 'data'), '--from', '0', '--to', '3', '--file', first);
    expect([exported.code, exported.err]).toEqual([0, `orchd export: the state at 0 and 3 entries to 3 written to ${first}\n`]);
    const [fromFolder, fromRecording] = await Promise.all([run('log', '--data-dir', join(work, 'data'), '--to', '3', '-o', 'json'), run('log', '--file', first, '-o', 'json')]);
    expect(jsonLines(fromRecording.out).map((l) => l.resourceVersion)).toEqual(['1', '2', '3']);
    expect(fromRecording.out).toBe(fromFolder.out);
  });

  it("diff refuses a time without its zone as state does, with no source given too, and in a history's @TIME", async () => {
    const zoneless = (word: string) => `a time must say its zone: ${word}Z for UTC, or an offset such as ${word}+02:00`;
    const bare = await run('diff', '2026-11-29T10:21:47Z', '2026-11-29T10:21:50');
    expect([bare.code, bare.err.split('\n')[0]]).toEqual([2, `orchd diff: B: "2026-11-29T10:21:50": ${zoneless('2026-11-29T10:21:50')}`]);
    const atSource = await run('diff', `${recording}@2026-11-29T10:21:47`, join(work, 'data'));
    expect([atSource.code, atSource.err.split('\n')[0]]).toEqual([2, `orchd diff: A: "2026-11-29T10:21:47": ${zoneless('2026-11-29T10:21:47')}`]);
  });

  it('piped into head, every command ends quietly with status 0', async () => {
    const cli = await builtCli();
    for (const args of [
      ['log', '--data-dir', join(work, 'data')],
      ['state', '--server', server.url, '--at', String(head), '-o', 'json'],
      ['diff', '--file', recording, '1', String(head)],
    ]) {
      const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d) => (err += String(d)));
      // The reader takes a little, then goes away (as head -c 300 does).
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      child.stdout.destroy();
      const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      expect({ args: args[0], code, err }).toEqual({ args: args[0], code: 0, err: '' });
    }
  }, 180_000);

  it('an object not there at a version: said, with when it was deleted or created, exit 1, from all three', async () => {
    const gone = [...deleted.entries()][3];
    for (const [flag, source] of sources) {
      const after = await run('state', flag, source, '--at', String(head), `events/${gone[0]}`, '-n', NS);
      expect({ flag, code: after.code, out: after.out, err: after.err }).toEqual({
        flag,
        code: 1,
        out: '',
        err: `orchd state: events/${gone[0]} in namespace ${NS}: not there at version ${head}: deleted at ${gone[1]} (${iso(timeOf.get(gone[1])!)})\n`,
      });
      const [name, rv] = [...created].find(([, v]) => v > policyChanged)!;
      const before = await run('state', flag, source, '--at', String(policyChanged), `events/${name}`, '-n', NS);
      expect([before.code, before.err]).toEqual([1, `orchd state: events/${name} in namespace ${NS}: not there at version ${policyChanged}: created at ${rv} (${iso(timeOf.get(rv)!)})\n`]);
      const never = await run('state', flag, source, '--at', String(head), 'events/never', '-n', NS);
      expect([never.code, never.err]).toEqual([1, `orchd state: events/never in namespace ${NS}: not there at version ${head}: no version of it in the log (from version 1 to ${head})\n`]);
    }
  });

  it('log --from T1 --to T2 holds exactly the entries committed from T1 to T2; --type, --name, history --from/--to', async () => {
    // Two entries with time between them: T1 just after the first, T2 just before the one after the second.
    const gaps = [...timeOf].filter(([rv, t]) => rv > 10 && rv < head - 10 && (timeOf.get(rv + 1) ?? 0) > t + 1);
    const [v1] = gaps[0];
    const [v2] = gaps[gaps.length - 1];
    const [t1, t2] = [timeOf.get(v1)! + 1, timeOf.get(v2 + 1)! - 1];
    const span = jsonLines((await ask('log', '--from', iso(t1), '--to', iso(t2), '-o', 'json')).out);
    const expected = [...timeOf].filter(([, t]) => t >= t1 && t <= t2).map(([rv]) => String(rv));
    expect(span.map((l) => l.resourceVersion)).toEqual(expected);
    expect([span[0].resourceVersion, span.at(-1).resourceVersion]).toEqual([String(v1 + 1), String(v2)]);
    const deletes = jsonLines((await ask('log', '--kind', 'events', '-n', NS, '--type', 'deleted', '-o', 'json')).out);
    expect(deletes.map((l) => l.type)).toEqual(Array(DELETED).fill('DELETED'));
    const one = [...labelled.keys()].find((n) => !deleted.has(n))!;
    const ofOne = jsonLines((await ask('log', '--kind', 'events', '-n', NS, '--name', one, '-o', 'json')).out);
    expect(ofOne.map((l) => [l.type, l.resourceVersion])).toEqual([
      ['ADDED', String(created.get(one))],
      ['MODIFIED', String(labelled.get(one))],
    ]);
    const later = jsonLines((await ask('history', `events/${one}`, '-n', NS, '--from', String(created.get(one)! + 1), '-o', 'json-patch')).out);
    expect(later.map((v) => [v.type, v.resourceVersion])).toEqual([['MODIFIED', String(labelled.get(one))]]);
    const earlier = jsonLines((await ask('history', `events/${one}`, '-n', NS, '--to', iso(timeOf.get(created.get(one)!)!), '-o', 'json-patch')).out);
    expect(earlier.map((v) => v.type)).toEqual(['ADDED']);
  });

  it('objects print without managedFields in json as in yaml, unless asked for', async () => {
    const name = [...labelled.keys()][0];
    for (const args of [
      ['log', '--kind', 'events', '-n', NS, '--name', name, '-o', 'json'],
      ['state', '--at', String(head), '--kind', 'events', '-n', NS, '-o', 'json'],
    ]) {
      const hidden = jsonLines((await ask(args[0], ...args.slice(1))).out).map((l) => l.object ?? l);
      expect(hidden.length).toBeGreaterThan(0);
      expect(hidden.filter((o) => o.metadata.managedFields !== undefined)).toEqual([]);
      const shown = jsonLines((await ask(args[0], ...args.slice(1), '--show-managed-fields')).out).map((l) => l.object ?? l);
      expect(shown.every((o) => Array.isArray(o.metadata.managedFields))).toBe(true);
      expect(shown.map(({ metadata: { managedFields: _m, ...m }, ...o }) => ({ ...o, metadata: m }))).toEqual(hidden);
    }
  });

  it('refusals name the right flag, in one line', async () => {
    const first = (r: Run) => [r.code, r.err.split('\n')[0]];
    expect(first(await run('replay'))).toEqual([2, 'orchd replay: give exactly one source: a RECORDING (or --file) or --data-dir']);
    expect(first(await run('replay', recording, '--fork', work, '--pause-at', '3'))).toEqual([
      1,
      `orchd replay: --fork ${work}: the folder exists and is not empty; a fork is made into a new or empty folder`,
    ]);
    expect(first(await run('state', '--file', recording, '--at', '2026-02-30T01:00:00Z'))).toEqual([2, 'orchd state: --at: "2026-02-30T01:00:00Z": not a time: 2026-02 has no day 30']);
    expect(first(await run('state', '--file', recording, '--at', '-1'))).toEqual([
      2,
      'orchd state: --at: "-1": neither a resourceVersion (a number) nor a time (RFC 3339, e.g. 2026-11-26T02:14:00Z) nor HEAD',
    ]);
    const tail = join(work, 'tail.orchlog');
    expect((await run('export', '--data-dir', join(work, 'data'), '--from', String(policyChanged), '--file', tail)).code).toBe(0);
    expect(first(await run('state', '--file', tail, '--at', String(policyChanged - 1)))).toEqual([
      1,
      `orchd state: --at ${policyChanged - 1}: before the recording: it starts with the state at version ${policyChanged}`,
    ]);
    // The recording's first version of the policy is its state there, not a create: said so, with the write that made it (its time, user, manager and verb), as the whole history tells it.
    const mid = jsonLines((await run('history', '--file', tail, 'vap/event-guard', '-o', 'json-patch')).out);
    const whole = jsonLines((await run('history', '--data-dir', join(work, 'data'), 'vap/event-guard', '-o', 'json-patch')).out).find((v) => v.resourceVersion === String(policyChanged));
    expect(mid.map((v) => [v.resourceVersion, v.type, v.time, v.user, v.manager])).toEqual([[String(policyChanged), 'FIRST', whole.time, whole.user, whole.manager]]);
    expect(whole.manager).toMatch(/ \((update|patch|apply)\)$/);
    const midDiff = await run('history', '--file', tail, 'vap/event-guard');
    expect(midDiff.out.split('\n')[0]).toBe(`# ${policyChanged}   ${whole.time}   FIRST IN THE RECORDING   ${whole.user}   ${whole.manager}`);
    // A recording whose starting state names no writers (exported from a server, or before they were kept) says so.
    const served = join(work, 'served-tail.orchlog');
    expect((await run('export', '--server', server.url, '--from', String(policyChanged), '--file', served)).code).toBe(0);
    const unnamed = await run('history', '--file', served, 'vap/event-guard');
    expect(unnamed.out.split('\n')[0]).toBe(`# ${policyChanged}   FIRST IN THE RECORDING (written before it starts: when and by whom is not in it; managedFields name rollout-bot? (Update))`);
    // What is taken as it is meant: head in lower case, host:port as http://, the recording as an argument.
    const [lower, upper] = await Promise.all([run('state', '--file', recording, '--at', 'head', '--kind', 'vap'), run('state', '--file', recording, '--at', 'HEAD', '--kind', 'vap')]);
    expect([lower.code, lower.out]).toEqual([0, upper.out]);
    const [bare, schemed] = await Promise.all([run('log', '--server', server.url.replace(/^http:\/\//, ''), '--to', '5', '-o', 'json'), run('log', '--server', server.url, '--to', '5', '-o', 'json')]);
    expect([bare.code, bare.err, bare.out]).toEqual([0, '', schemed.out]);
    const [positional, flagged] = await Promise.all([run('log', recording, '--to', '5'), run('log', '--file', recording, '--to', '5')]);
    expect([positional.code, positional.out]).toEqual([0, flagged.out]);
  });
});
