/**
 * Makes bench/examples/writes.orchlog, the example recording that ships with orchd: a short run of the
 * writes workload (bench/payload.ts Events: creates, label patches, deletes) against a real orchd,
 * exported with `orchd export`. Replay it with `orchd replay bench/examples/writes.orchlog`.
 *
 *   npm run build && node dist/bench/example-recording.js [out-file]
 */
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { HttpClient } from './http-client.js';
import { defaultOrchdCli, Orchd } from './orchd.js';
import { eventBytes, eventsPath } from './payload.js';

const CREATES = 80;
const PATCHES = 40;
const DELETES = 20;

async function main(out = 'bench/examples/writes.orchlog'): Promise<void> {
  const cli = defaultOrchdCli();
  const { orchd, ready } = await Orchd.start({ cli });
  try {
    const http = new HttpClient(ready.url, 8);
    const start = JSON.parse((await http.request('GET', '/api/v1/namespaces?limit=1')).body.toString()).metadata.resourceVersion as string;
    const expect = (status: number, want: number, what: string) => {
      if (status !== want) throw new Error(`${what}: ${status}`);
    };
    // In waves of 8 concurrent writes, as the writes scenario's clients send them.
    for (let i = 0; i < CREATES; i += 8) {
      await Promise.all(Array.from({ length: Math.min(8, CREATES - i) }, async (_, j) => expect((await http.request('POST', eventsPath(), eventBytes(`ex-${i + j}`, i + j))).status, 201, 'create')));
    }
    for (let i = 0; i < PATCHES; i++) {
      const body = Buffer.from(JSON.stringify({ metadata: { labels: { round: String(i) } } }));
      expect((await http.request('PATCH', `${eventsPath()}/ex-${i % 20}`, body, { contentType: 'application/merge-patch+json' })).status, 200, 'patch');
    }
    for (let i = 0; i < DELETES; i++) expect((await http.request('DELETE', `${eventsPath()}/ex-${CREATES - 1 - i}`)).status, 200, 'delete');
    http.close();
    await orchd.stop();
    // From the data folder, so the recording carries the log's commit times (the API has none).
    await rm(out, { force: true });
    await promisify(execFile)(process.execPath, [cli, 'export', '--data-dir', orchd.dataDir, '--from', start, '--file', out]);
    process.stdout.write(`wrote ${out}: the state at ${start}, then ${CREATES + PATCHES + DELETES} writes\n`);
  } finally {
    await orchd.dispose();
  }
}

main(process.argv[2]).catch((err: unknown) => {
  process.stderr.write(`example-recording: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
