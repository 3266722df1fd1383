/**
 * The CPU a create's and an update's own work costs, without HTTP and storage: managedFields of a
 * create, of an update by the same and by another manager, and a create's CPU stages in a row
 * (decode, checks, managedFields, validation, the log record, the JSON answer), on the writes
 * scenario's Event bodies. CPU time (process.cpuUsage), the best of 8 rounds of 10,000: on a shared
 * machine, where request rates move by 2–4× between runs, this is what tells two builds apart.
 *
 *   node dist/bench/write-path-cpu.js [BUILD ...]    BUILD: a checkout built with `npm run build`
 *                                                    (default: this one); rounds alternate builds
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const N = 10_000;
const ROUNDS = 8;
const PAIRS = 3;

type Obj = { metadata: Record<string, unknown> } & Record<string, unknown>;

/** µs of CPU per call of fn over inputs made afresh by prep before each round; the best round. */
function cpu<T>(prep: () => T[], fn: (input: T, i: number) => void): number {
  let best = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const inputs = prep();
    const c0 = process.cpuUsage();
    for (let i = 0; i < N; i++) fn(inputs[i], i);
    const c = process.cpuUsage(c0);
    best = Math.min(best, (c.user + c.system) / N);
  }
  return best;
}

/** Runs in a child per build: that build's modules, from its dist folder. */
async function measure(root: string): Promise<Record<string, number>> {
  const load = (p: string) => import(pathToFileURL(resolve(root, 'dist', p)).href);
  const { decodeBody, OBJECT_MEDIA_TYPES } = await load('src/http/codec/body.js');
  const { checkObject } = await load('src/http/codec/decode-object.js');
  const { trackUpdate } = await load('src/registry/field-manager.js');
  const { validateCreate } = await load('src/registry/validate.js');
  const { encodeRecord } = await load('src/log/codec.js');
  const { event } = await load('src/resources/event.js');
  const { eventBytes } = await load('bench/payload.js');
  // A WriteTarget: managedFields' time comes from the write's (the registry's clock), fixed here.
  const route = { kind: event, version: 'v1', at: new Date(0) };
  const bodies: Buffer[] = Array.from({ length: N }, (_, i) => eventBytes(`w-cpu-${i}`, i));
  const decode = (b: Buffer): Obj => checkObject(event, 'v1', decodeBody(b, 'application/json', { accept: OBJECT_MEDIA_TYPES }).value, [], 'Strict').obj;
  const fresh = () => bodies.map(decode);
  const live = fresh();
  for (const o of live) trackUpdate(route, undefined, o, 'bench');
  // The same Event with an annotation added: what the scenario's PUTs send.
  const changed = () =>
    live.map((l, i) => {
      const n = structuredClone(l);
      delete n.metadata.managedFields;
      n.metadata.annotations = { 'bench.orch.io/sent-at': String(i) };
      return n;
    });
  const decoded = () => bodies.map((b) => decodeBody(b, 'application/json', { accept: OBJECT_MEDIA_TYPES }).value);
  return {
    'decode (JSON with duplicate keys)': cpu(
      () => bodies,
      (b) => decodeBody(b, 'application/json', { accept: OBJECT_MEDIA_TYPES }),
    ),
    'checks (apiVersion and kind, types, unknown fields)': cpu(decoded, (v) => checkObject(event, 'v1', v, [], 'Strict')),
    "a create's managedFields": cpu(fresh, (o) => trackUpdate(route, undefined, o, 'bench')),
    "an update's managedFields, same manager": cpu(changed, (n, i) => trackUpdate(route, live[i], n, 'bench')),
    "an update's managedFields, another manager": cpu(changed, (n, i) => trackUpdate(route, live[i], n, 'other')),
    "a create's CPU stages in a row": cpu(
      () => bodies,
      (b) => {
        const obj = decode(b);
        trackUpdate(route, undefined, obj, 'bench');
        Object.assign(obj.metadata, { uid: 'c5b0b1a4-9a87-4a37-9b0e-5a1a8b2b1a11', creationTimestamp: '2026-01-01T00:00:00Z', generation: 1, resourceVersion: '123456' });
        validateCreate(event, obj);
        encodeRecord({ type: 'put', key: `/events.orch.io/events/default/${String(obj.metadata.name)}`, value: obj });
        Buffer.from(JSON.stringify(obj));
      },
    ),
  };
}

async function main(argv: string[]): Promise<void> {
  if (argv[0] === '--measure') {
    process.stdout.write(JSON.stringify(await measure(argv[1])));
    return;
  }
  const self = fileURLToPath(import.meta.url);
  const builds = argv.length > 0 ? argv.map((b) => resolve(b)) : [resolve(self, '../../..')];
  const results = new Map<string, Record<string, number>[]>(builds.map((b) => [b, []]));
  for (let pair = 0; pair < PAIRS; pair++) {
    for (const b of builds) results.get(b)!.push(JSON.parse(execFileSync(process.execPath, [self, '--measure', b], { encoding: 'utf8' })) as Record<string, number>);
  }
  const rows = Object.keys(results.get(builds[0])![0]);
  process.stdout.write(`| µs of CPU per operation (best of ${ROUNDS} × ${N}, ${PAIRS} alternating runs) | ${builds.join(' | ')} |\n|---|${builds.map(() => '--:|').join('')}\n`);
  for (const row of rows)
    process.stdout.write(
      `| ${row} | ${builds
        .map((b) =>
          results
            .get(b)!
            .map((r) => r[row].toFixed(1))
            .join(' / '),
        )
        .join(' | ')} |\n`,
    );
}

await main(process.argv.slice(2));
