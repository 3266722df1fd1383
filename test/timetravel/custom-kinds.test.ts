import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';
import { NS, writeHistory, type Versions } from './custom-kinds-fixture.js';
import { run, type Run } from './helpers.js';
import { jsonLines } from '../helpers/json-lines.js';

/*
 * Custom resources through the time-travel commands: a running orchd whose history holds CRDs and
 * their objects, read from its data folder, through its API and from a recording of it. The three
 * must give the same answers.
 */

let server: TestServer;
let dataDir: string;
let recording: string;
let auditLog: string;
let v: Versions;

type Source = 'data-dir' | 'server' | 'file';
const SOURCES: Source[] = ['data-dir', 'server', 'file'];
const where = (s: Source): string[] => [`--${s}`, s === 'data-dir' ? dataDir : s === 'server' ? server.url : recording];

async function ok(command: string, ...args: string[]): Promise<Run> {
  const r = await run(command, ...args);
  // diff says the sides differ as diff(1) does: with status 1.
  expect(r.code, r.err).toBe(command === 'diff' ? 1 : 0);
  return r;
}

/** The command from each source: the outputs, which must be the same. */
async function agreed(command: string, ...args: string[]): Promise<string> {
  const outs = [];
  for (const s of SOURCES) outs.push((await ok(command, ...where(s), ...args)).out);
  expect(outs[1], 'server').toBe(outs[0]);
  expect(outs[2], 'recording').toBe(outs[0]);
  return outs[0];
}

beforeAll(async () => {
  dataDir = tempDir('orchd-crd-tt-');
  auditLog = join(tempDir('orchd-crd-audit-'), 'audit.log');
  server = await startServer({ dataDir, auditLogPath: auditLog });
  v = await writeHistory(server.url);
  recording = join(tempDir('orchd-crd-rec-'), 'crd.orchlog');
  await ok('export', '--data-dir', dataDir, '--from', '1', '--file', recording);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('orchd log with custom resources', () => {
  it('shows custom resources beside built-in ones, the same from the folder, the server and a recording', async () => {
    const out = await agreed('log', '-o', 'json', '--from', String(v.webappsCrd));
    const mine = jsonLines(out).filter((l) => l.resource !== 'customresourcedefinitions.apiextensions.orch.io');
    expect(mine.map((l) => `${l.resourceVersion} ${l.type} ${l.resource} ${l.object.metadata.name}`)).toEqual([
      `${v.shop} ADDED webapps.apps.example.com shop`,
      `${v.shopScaled} MODIFIED webapps.apps.example.com shop`,
      `${v.cart} ADDED webapps.apps.example.com cart`,
      `${v.cartGone} DELETED webapps.apps.example.com cart`,
      `${v.widget} ADDED widgets.things.example.com w1`,
    ]);
    // The table names the resource as kubectl does.
    const table = (await ok('log', ...where('data-dir'), '--from', String(v.shop), '--to', String(v.shop))).out;
    expect(table).toMatch(new RegExp(`^${v.shop} .* ADDED +webapps\\.apps\\.example\\.com +${NS} +shop `, 'm'));
  });

  it('--kind takes every name kubectl takes for a custom kind, from every source', async () => {
    const expected = [v.shop, v.shopScaled, v.cart, v.cartGone].map(String);
    for (const name of ['webapps', 'webapp', 'WebApp', 'wa', 'webapps.apps.example.com', 'webapps.v1.apps.example.com']) {
      const out = await agreed('log', '-o', 'json', '--kind', name);
      expect(
        jsonLines(out).map((l) => l.resourceVersion),
        name,
      ).toEqual(expected);
    }
    // From 2: a recording's first version is its state, not an entry.
    const widgets = jsonLines(await agreed('log', '-o', 'json', '--kind', 'wdg,ns', '--from', '2'));
    expect(widgets.filter((l) => l.resource === 'widgets.things.example.com').map((l) => l.object.metadata.name)).toEqual(['w1']);
    expect(widgets.some((l) => l.resource === 'namespaces')).toBe(true);
  });

  it('names a deleted CRD’s kind over the versions it defined it, and shows its objects’ changes, from every source', async () => {
    const out = jsonLines(await agreed('log', '-o', 'json', '--kind', 'gdg', '--to', String(v.gadgetsGone)));
    expect(out.map((l) => `${l.type} ${l.object.metadata.name}`)[0]).toBe('ADDED g1');
    expect(out.map((l) => `${l.type} ${l.object.metadata.name}`).at(-1)).toBe('DELETED g1');
    // Every kind, the one of a CRD deleted since too: the whole log, the same from each.
    const all = jsonLines(await agreed('log', '-o', 'json', '--from', '2'));
    expect(all.filter((l) => l.resource === 'gadgets.old.example.com').map((l) => l.resourceVersion)).toEqual(out.map((l) => l.resourceVersion));
    for (const s of SOURCES) {
      const after = await run('log', ...where(s), '--kind', 'gadgets', '--from', String(v.webappsCrd));
      expect(after.code, s).toBe(1);
      expect(after.err).toContain('unknown kind "gadgets"');
      expect(after.err).toContain('webapps.apps.example.com');
    }
  });

  it('--audit shows the refused writes of custom resources beside their changes', async () => {
    for (const kind of [[], ['--kind', 'wa']]) {
      const out = jsonLines((await ok('log', ...where('data-dir'), '--audit', auditLog, '-o', 'json', '--from', String(v.shop), '--to', String(v.shopScaled), ...kind)).out);
      expect(
        out.map((l) => `${l.type} ${l.resource} ${l.type === 'REFUSED' ? l.code : l.object.metadata.name}`),
        kind.join(' '),
      ).toEqual(['ADDED webapps.apps.example.com shop', 'REFUSED webapps.apps.example.com 409', 'MODIFIED webapps.apps.example.com shop']);
    }
  });

  it('refuses a kind no CRD of the versions shown defines, naming the kinds they do', async () => {
    const r = await run('log', ...where('data-dir'), '--kind', 'webapps', '--to', String(v.event));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /unknown kind "webapps": orchd serves namespaces, events.events.orch.io, .*customresourcedefinitions.apiextensions.orch.io, .*, events, leases.coordination.orch.io; no CustomResourceDefinition defines a kind from version 1 to \d+/,
    );
  });
});

describe('orchd state with custom resources', () => {
  it('lists the objects of the kinds the CRDs define at that version', async () => {
    const out = await agreed('state', '--at', String(v.widget), '-o', 'json');
    const names = jsonLines(out).map((o) => `${o.apiVersion} ${o.kind} ${o.metadata.name}`);
    expect(names).toContain('apps.example.com/v1 WebApp shop');
    expect(names).toContain('things.example.com/v1 Widget w1');
    expect(names).not.toContain('apps.example.com/v1 WebApp cart');
    const table = await agreed('state', '--at', String(v.widget), '-n', NS);
    expect(table).toMatch(/^webapps\.apps\.example\.com +ck +shop /m);
  });

  it('one object and each --kind form, as it was at the version', async () => {
    const at = await agreed('state', '--at', String(v.shop), '-n', NS, 'wa/shop', '-o', 'json');
    expect(jsonLines(at).map((o) => o.spec)).toEqual([{ replicas: 1 }]);
    for (const name of ['webapps', 'webapp', 'WebApp', 'wa', 'webapps.apps.example.com', 'webapps.v1.apps.example.com']) {
      const out = jsonLines(await agreed('state', '--at', String(v.cart), '--kind', name, '-o', 'json'));
      expect(
        out.map((o) => `${o.metadata.name} ${o.spec.replicas}`),
        name,
      ).toEqual(['cart 1', 'shop 3']);
    }
    const widget = jsonLines(await agreed('state', '--at', 'HEAD', 'widgets.things.example.com/w1', '-o', 'json'));
    expect(widget.map((o) => o.spec.colour)).toEqual(['red']);
  });

  it('a CRD not yet created, or deleted before the version, defines no kind at it', async () => {
    const before = await run('state', ...where('data-dir'), '--at', String(v.event), '--kind', 'webapps');
    expect(before.code).toBe(1);
    expect(before.err).toContain(`unknown kind "webapps"`);
    expect(before.err).toContain(`at version ${v.event}`);
    const gone = await run('state', ...where('file'), '--at', 'HEAD', '--kind', 'gadgets');
    expect(gone.code).toBe(1);
    // While it was defined, its object was there: the server, which serves the kind no more, reads it from its log.
    const during = jsonLines(await agreed('state', '--at', String(v.gadget), '--kind', 'gadgets.old.example.com', '-o', 'json'));
    expect(during.map((o) => o.metadata.name)).toEqual(['g1']);
    const every = jsonLines(await agreed('state', '--at', String(v.gadget), '-n', NS, '-o', 'json'));
    expect(every.map((o) => o.kind)).toEqual(['Event', 'Gadget']);
  });
});

describe('orchd history with custom resources', () => {
  it('every version of a custom resource, by each name of its kind, from every source', async () => {
    const outs = new Set<string>();
    for (const name of ['webapps', 'wa', 'WebApp', 'webapps.apps.example.com', 'webapps.v1.apps.example.com']) outs.add(await agreed('history', `${name}/shop`, '-n', NS, '-o', 'json-patch'));
    expect(outs.size).toBe(1);
    const versions = jsonLines([...outs][0]);
    expect(versions.map((l) => `${l.resourceVersion} ${l.type}`)).toEqual([`${v.shop} ADDED`, `${v.shopScaled} MODIFIED`]);
    expect(versions[1].patch).toContainEqual({ op: 'replace', path: '/spec/replicas', value: 3 });
    const cluster = jsonLines(await agreed('history', 'wdg/w1', '-o', 'json-patch'));
    expect(cluster.map((l) => l.type)).toEqual(['ADDED']);
  });

  it('an object of a deleted CRD’s kind, from every source', async () => {
    const out = jsonLines(await agreed('history', 'gadgets/g1', '-n', NS, '-o', 'json-patch'));
    expect(out[0].type).toBe('ADDED');
    expect(out[out.length - 1].type).toBe('DELETED');
  });
});

describe('orchd diff with custom resources', () => {
  it('shows what changed in custom resources, whole and as --stat', async () => {
    // From just before the first custom resource: the CRDs' status writes are before it.
    const out = await agreed('diff', String(v.shop - 1), String(v.widget));
    expect(out).toContain('webapps.apps.example.com/ck/shop');
    expect(out).toContain('widgets.things.example.com/w1');
    expect(out).toMatch(/^\+ +replicas: 3$/m);
    const stat = await agreed('diff', String(v.shop - 1), String(v.widget), '--stat');
    expect(stat).toMatch(/^ webapps\.apps\.example\.com\/ck\/shop \| \+\d+ -0$/m);
    expect(stat).toMatch(/^ widgets\.things\.example\.com\/w1 \| \+\d+ -0$/m);
    expect(stat).toMatch(/ 2 objects changed: 2 added, 0 deleted, 0 modified;/);
    const one = await agreed('diff', String(v.shop), String(v.shopScaled), '--kind', 'wa', '-o', 'json-patch');
    expect(jsonLines(one).map((l) => l.object)).toEqual(['webapps.apps.example.com/ck/shop']);
    expect(jsonLines(one)[0].patch).toContainEqual({ op: 'replace', path: '/spec/replicas', value: 3 });
  });
});

describe('orchd export and fork with custom resources', () => {
  it('a recording and a fork carry the custom resources and their CRDs', async () => {
    const fork = join(tempDir('orchd-crd-fork-'), 'fork');
    await ok('fork', recording, '--at', String(v.shopScaled), '--data-dir', fork);
    const forked = await ok('state', '--data-dir', fork, '--at', String(v.shopScaled), '-o', 'json');
    const original = await ok('state', '--data-dir', dataDir, '--at', String(v.shopScaled), '-o', 'json');
    expect(forked.out).toBe(original.out);
    expect(jsonLines(forked.out).map((o) => o.metadata.name)).toContain('shop');
    // A recording exported from a fork's folder starting after the CRDs: its state holds them and their objects.
    const again = join(tempDir('orchd-crd-rec2-'), 'again.orchlog');
    await ok('export', '--data-dir', fork, '--from', String(v.shop), '--file', again);
    const state = jsonLines((await ok('state', '--file', again, '--at', String(v.shop), '-o', 'json', '--kind', 'wa')).out);
    expect(state.map((o) => o.metadata.name)).toEqual(['shop']);
    const log = jsonLines((await ok('log', '--file', again, '-o', 'json', '--kind', 'webapps')).out);
    expect(log.map((l) => `${l.resourceVersion} ${l.type}`)).toEqual([`${v.shopScaled} MODIFIED`]);
  });
});
