/**
 * Event expiry after a restart, through the real server on a real LevelDB folder: the Events it did
 * not see written expire by the times they carry, read from their stored bytes (log/msgpack-path.ts)
 * without decoding them. The fixture's eventTime is months old: a wrong creationTimestamp read would
 * let it count, and expire every Event at once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { removeDir, tempDir } from '../helpers/temp.js';
import { eventually, sleep } from '../helpers/poll.js';
import { EVENTS, event } from '../lists/server.js';

const dataDir = tempDir('orchd-expiry-restart-', { until: 'file' });
let server: TestServer | undefined;
afterAll(async () => {
  await server?.stop();
  removeDir(dataDir);
});

const exists = async (name: string) => (await call(server!.url, 'GET', `${EVENTS}/namespaces/default/events/${name}`)).status === 200;

describe('event expiry after a restart', () => {
  it('expires the Events written before it by their creationTimestamp, oldest first, and keeps the newer ones', async () => {
    server = await startServer({ dataDir });
    expect((await call(server.url, 'POST', `${EVENTS}/namespaces/default/events`, event('older'))).status).toBe(201);
    await sleep(5_000);
    expect((await call(server.url, 'POST', `${EVENTS}/namespaces/default/events`, event('newer'))).status).toBe(201);
    await server.stop();

    // Five seconds to live: older (5 s and more, its timestamp cut to the second) is due at once; newer, as long as the restart and the cut took under 4 s, is not.
    server = await startServer({ dataDir, eventTtlSeconds: 5 });
    await eventually(async () => !(await exists('older')), { timeoutMs: 4_000, what: 'older expired' });
    expect(await exists('newer')).toBe(true);
    await eventually(async () => !(await exists('newer')), { what: 'newer expired' });
  }, 30_000);
});
