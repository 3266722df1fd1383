import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENTS, event, inBatches, startListServer, type ListServer } from './server.js';
import { call } from '../helpers/server.js';

/*
 * An unpaged list of objects whose JSON is not made yet (every object after a restart) encodes each
 * one: at 1M Events that was 19 s in which the server answered nothing else, watches and probes
 * included (bench/RESULTS.md 58, 64). It lets the event loop turn between megabytes of the answer.
 * The server runs in this process, so a timer here is held exactly as long as the server's loop is.
 */

let s: ListServer;
const N = 1500;
/** ~40 KB of JSON per Event in 400 small annotations: ~60 MB in all, encoded from the log's bytes. */
const annotations = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`orch.io/note-${i}`, `value ${i} `.repeat(8)]));

beforeAll(async () => {
  const first = await startListServer();
  await inBatches(
    Array.from({ length: N }, (_, i) => i),
    16,
    async (i) => {
      const e = event(`big-${i}`);
      e.metadata.annotations = annotations;
      const r = await call(first.url, 'POST', `${EVENTS}/namespaces/default/events`, e);
      if (r.status !== 201) throw new Error(`create big-${i}: ${r.status} ${r.text.slice(0, 300)}`);
    },
  );
  await first.stop();
  // Restarted: every object is the log's bytes again, with no JSON made.
  s = await startListServer({ dataDir: first.dataDir });
}, 120_000);

afterAll(async () => {
  await s?.cleanup();
});

describe('an unpaged list of objects not encoded yet', () => {
  it('lets other work run between megabytes, and is still one exact document of its Content-Length', async () => {
    let last = performance.now();
    let longestHold = 0;
    let ticking = true;
    const tick = () => {
      const now = performance.now();
      longestHold = Math.max(longestHold, now - last);
      last = now;
      if (ticking) setTimeout(tick, 1);
    };
    const t0 = performance.now();
    setTimeout(tick, 1);
    const res = await fetch(`${s.url}${EVENTS}/namespaces/default/events`);
    const body = Buffer.from(await res.arrayBuffer());
    const took = performance.now() - t0;
    ticking = false;

    expect(res.status).toBe(200);
    expect(Number(res.headers.get('content-length'))).toBe(body.length);
    const list = JSON.parse(body.toString('utf8'));
    expect(list.items).toHaveLength(N);
    expect(list.items.every((o: any) => o.metadata.annotations['orch.io/note-399'] === annotations['orch.io/note-399'])).toBe(true);
    // Held for the whole encoding, the loop's longest hold was most of the answer's time; turning
    // every megabyte, it is a small part of it (a slice, or a collection).
    expect(longestHold).toBeLessThan(took / 4);
  }, 60_000);
});
