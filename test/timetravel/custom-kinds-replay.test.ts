import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/poll.js';
import { call, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';
import { CRDS, NS, WEBAPPS, writeHistory, type Versions } from './custom-kinds-fixture.js';
import { run, startReplayOf } from './helpers.js';
import type { Replaying } from '../../src/timetravel/replay/server.js';
import { jsonLines } from '../helpers/json-lines.js';

/*
 * A replay serves custom resources as the recorded server did: a CRD's kind from the version that
 * created it to the one that deleted it, its objects at their versions, over get, list, discovery
 * and watch.
 */

let dataDir: string;
let recording: string;
let v: Versions;
const GADGETS = `/apis/old.example.com/v1/namespaces/${NS}/gadgets`;

beforeAll(async () => {
  dataDir = tempDir('orchd-crd-replay-');
  const server = await startServer({ dataDir });
  try {
    v = await writeHistory(server.url);
  } finally {
    await server.close();
  }
  recording = join(tempDir('orchd-crd-replay-rec-'), 'crd.orchlog');
  const exported = await run('export', '--data-dir', dataDir, '--from', '1', '--file', recording);
  expect(exported.code, exported.err).toBe(0);
}, 60_000);

/** A replay of the recording paused once entry rv is served. */
async function pausedAt(rv: number): Promise<Replaying> {
  const r = await startReplayOf({ file: recording }, { speed: 'max', pauseAt: rv });
  await eventually(() => r.control.status().paused && r.control.status().at === rv, { what: `the replay paused at ${rv}` });
  return r;
}

describe('orchd replay with custom resources', () => {
  it('paused after a custom resource is written: it is served at its version, in lists, gets and discovery', async () => {
    const r = await pausedAt(v.shopScaled);
    try {
      const list = await call(r.url, 'GET', WEBAPPS);
      expect(list.status, JSON.stringify(list.body)).toBe(200);
      expect(list.body.metadata.resourceVersion).toBe(String(v.shopScaled));
      expect(list.body.items.map((o: any) => `${o.metadata.name} ${o.metadata.resourceVersion} ${o.spec.replicas}`)).toEqual([`shop ${v.shopScaled} 3`]);
      const at = await call(r.url, 'GET', `${WEBAPPS}/shop?resourceVersion=${v.shop}&resourceVersionMatch=Exact`);
      expect([at.status, at.body.spec?.replicas]).toEqual([200, 1]);
      const discovery = await call(r.url, 'GET', '/apis/apps.example.com/v1');
      expect(discovery.body.resources.map((x: any) => x.name)).toContain('webapps');
      // The widgets CRD is there, its kind served, and nothing of it written yet.
      expect((await call(r.url, 'GET', '/apis/things.example.com/v1/widgets')).body.items).toEqual([]);
      // The gadgets CRD was deleted before: its kind is not served.
      expect((await call(r.url, 'GET', GADGETS)).status).toBe(404);
      expect((await call(r.url, 'GET', CRDS)).body.items.map((c: any) => c.metadata.name)).toEqual(['webapps.apps.example.com', 'widgets.things.example.com']);
    } finally {
      await r.close();
    }
  });

  it('a CRD’s kind is served while its CRD is, and goes when the replay reaches its delete', async () => {
    const r = await pausedAt(v.gadget);
    try {
      const g = await call(r.url, 'GET', `${GADGETS}/g1`);
      expect([g.status, g.body.metadata?.resourceVersion]).toEqual([200, String(v.gadget)]);
      expect((await call(r.url, 'GET', WEBAPPS)).status).toBe(404);
      r.control.jump(v.gadgetsGone);
      await eventually(() => r.control.status().at >= v.gadgetsGone, { what: 'the replay past the gadgets CRD delete' });
      await eventually(async () => (await call(r.url, 'GET', GADGETS)).status === 404, { what: 'gadgets no longer served' });
    } finally {
      await r.close();
    }
  });

  it('a watch from before the custom resources sees each of their changes at its recorded version', async () => {
    const r = await pausedAt(v.shop - 1);
    try {
      r.control.resume();
      await r.done;
      const watch = await call(r.url, 'GET', `${WEBAPPS}?watch=true&resourceVersion=${v.shop - 1}&timeoutSeconds=1`);
      const events = jsonLines(String(watch.text)).filter((e) => e.type !== 'BOOKMARK');
      expect(events.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`)).toEqual([
        `ADDED shop ${v.shop}`,
        `MODIFIED shop ${v.shopScaled}`,
        `ADDED cart ${v.cart}`,
        `DELETED cart ${v.cartGone}`,
      ]);
    } finally {
      await r.close();
    }
  });

  it('a replay of a data folder, at its end, serves the final state of a custom kind', async () => {
    const r = await startReplayOf({ 'data-dir': dataDir }, { speed: 'max' });
    try {
      await r.done;
      const w = await call(r.url, 'GET', '/apis/things.example.com/v1/widgets/w1');
      expect([w.status, w.body.spec?.colour]).toEqual([200, 'red']);
    } finally {
      await r.close();
    }
  });

  it('held for a watcher while the recording starts before its CRDs: says what it waits for, and the --from way out', async () => {
    const said: string[] = [];
    const r = await startReplayOf({ file: recording }, { speed: 'max', watchers: 1, onWaiting: (t) => said.push(t), waitNoteMs: 100 });
    try {
      // A controller of webapps lists them first: 404, so it never opens its watch.
      expect((await call(r.url, 'GET', WEBAPPS)).status).toBe(404);
      await eventually(() => said.length >= 2, { what: 'the note said twice' });
      const crds = [`gadgets.old.example.com at ${v.gadgetsCrd}`, `webapps.apps.example.com at ${v.webappsCrd}`, `widgets.things.example.com at ${v.widgetsCrd}`].join(', ');
      expect(said[0]).toBe(
        `waiting for 1 watch to open before the first entry (0 open); the recording creates CustomResourceDefinitions after it starts (${crds}): a controller's list of such a kind is answered 404 until then and it never watches; --from ${v.widgetsCrd + 1} starts the replay with them served`,
      );
      expect(r.control.status().at).toBe(r.initialVersion);
    } finally {
      await r.close();
    }
    // As said: from there, the kind is served at once.
    const from = await startReplayOf({ file: recording }, { speed: 'max', from: v.widgetsCrd + 1, watchers: 1 });
    try {
      expect((await call(from.url, 'GET', WEBAPPS)).status).toBe(200);
    } finally {
      await from.close();
    }
  });
});
