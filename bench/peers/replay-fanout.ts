/**
 * The bare fan-out peer of `orchd replay --speed max --watchers N`: what reading a recording and
 * writing its Events to N watch sockets costs on this machine, with nothing of orchd's server (no
 * view, no store, no watch engine, no framing per watcher). A plain node:http server in its own
 * process: it waits for N watches (any path; the query is ignored), then reads the recording page by
 * page (src/timetravel/recording/read.ts, as the replay does) and makes each page's Event entries one
 * buffer of watch lines, each object's JSON transcoded from its recorded bytes by the same transcoder
 * the replay uses (log/msgpack-json.ts). The buffer is written to every socket, and the next page
 * waits until every socket has taken it. Prints `serving <url>: the state at resourceVersion <from>`
 * as the replay does, and `replayed <n> entries` at the end.
 *
 *   node replay-fanout.js FILE PORT WATCHERS
 */
import { createServer, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { openRecording } from '../../src/timetravel/recording/read.js';
import { msgpackToJson } from '../../src/log/msgpack-json.js';
import { StoredEntry } from '../../src/log/codec.js';

const [file, portArg, watchersArg] = process.argv.slice(2);
const want = Number(watchersArg);
const EVENTS = 'events.orch.io/events/';

const recording = await openRecording(file);
const watchers: ServerResponse[] = [];
let allWatching!: () => void;
const watching = new Promise<void>((resolve) => (allWatching = resolve));

const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.flushHeaders();
  res.on('error', () => undefined);
  watchers.push(res);
  if (watchers.length === want) allWatching();
});
server.listen(Number(portArg), '127.0.0.1');
await once(server, 'listening');
process.stdout.write(`serving http://127.0.0.1:${portArg}: the state at resourceVersion ${recording.header.from}\n`);
await watching;

const OPEN = Buffer.from('{"type":"ADDED","object":');
const OPEN_DELETED = Buffer.from('{"type":"DELETED","object":');
const CLOSE = Buffer.from('}\n');
let entries = 0;
for await (const page of recording.pages) {
  const lines: Buffer[] = [];
  for (const e of page) {
    entries++;
    if (!e.key.startsWith(EVENTS) || !(e instanceof StoredEntry)) continue;
    const json = msgpackToJson(e.bytes.subarray(e.start, e.end), e.seq)?.json ?? Buffer.from(JSON.stringify(e.value));
    lines.push(e.type === 'delete' ? OPEN_DELETED : OPEN, json, CLOSE);
  }
  if (lines.length === 0) continue;
  const buffer = Buffer.concat(lines);
  const full = watchers.filter((w) => !w.destroyed && !w.write(buffer));
  await Promise.all(full.map((w) => Promise.race([once(w, 'drain'), once(w, 'close')])));
}
process.stdout.write(`replayed ${entries} entries\n`);
for (const w of watchers) w.end();
await recording.close();
server.close();
