/**
 * The timetravel scenario's `log --follow` figure (issue 31 item 9: a write shows within 1 s): a
 * fresh `orchd serve`, `orchd log --follow` on it (over --server, and over its --data-dir beside
 * it), then Events created one at a time; each write's latency is from its 201 to the line naming
 * it on the follower's stdout.
 */
import { Child } from './child.js';
import { HttpClient } from './http-client.js';
import { Orchd } from './orchd.js';
import { eventBytes, eventsPath } from './payload.js';
import { percentile } from './stats.js';

export interface FollowFigures {
  p50Ms: number;
  maxMs: number;
}

/** How long one write may take to show before the measurement fails. */
const LINE_LIMIT_MS = 30_000;

export async function followLatency(cli: string, writes: number, from: 'server' | 'data-dir'): Promise<FollowFigures> {
  const { orchd, ready } = await Orchd.start({ cli });
  const http = new HttpClient(ready.url, 1);
  const source = from === 'server' ? ['--server', ready.url] : ['--data-dir', orchd.dataDir];
  const follower = Child.start('log --follow', process.execPath, [cli, 'log', '--follow', ...source, '-o', 'json']);
  try {
    const latencies: number[] = [];
    // The first write only shows that the follower is following; it is not counted.
    for (let i = -1; i < writes; i++) {
      const name = `follow-${i + 1}`;
      const r = await http.request('POST', eventsPath(), eventBytes(name, i + 1));
      if (r.status !== 201) throw new Error(`create ${name}: ${r.status}`);
      const written = performance.now();
      await follower.waitForLine((l) => l.includes(`"${name}"`) || l.includes(`/${name}"`), i < 0 ? 120_000 : LINE_LIMIT_MS);
      if (i >= 0) latencies.push(performance.now() - written);
    }
    latencies.sort((a, b) => a - b);
    return { p50Ms: percentile(latencies, 50), maxMs: latencies[latencies.length - 1] };
  } finally {
    await follower.stop();
    await http.close();
    await orchd.stop();
  }
}
