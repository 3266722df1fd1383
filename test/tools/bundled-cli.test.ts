import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { startServer } from '../helpers/server.js';
import { builtPackage, killAll, spawnCli } from '../server/child.js';
import { createEvent, createNamespace, labelEvent } from '../watch/objects.js';
import { tempDir } from '../helpers/temp.js';

/*
 * The time-travel commands as `npm install` runs them: the bundled bin (dist/package/cli.js,
 * tools/bundle-package.ts) as a process. The bundle loads lazily imported modules as chunks of its
 * own making, which the other tools tests (runOrchd in this process) never load: a CommonJS package
 * imported lazily came out with a default export only, and every `-o yaml` failed there alone.
 */

const NS = 'bundled';
let work: string;
let dataDir: string;
let bin: string;
let labelled: number;

interface Result {
  code: number | null;
  out: string;
  err: string;
}

async function orchd(...args: string[]): Promise<Result> {
  const child = spawnCli(bin, args, { lifeMs: 60_000 });
  const { code } = await child.exited;
  return { code, out: child.output.stdout, err: child.output.stderr };
}

const docs = (text: string) => parseAllDocuments(text).map((d) => d.toJS());

beforeAll(async () => {
  work = tempDir('orchd-bundled-');
  dataDir = join(work, 'data');
  const server = await startServer({ dataDir });
  await createNamespace(server.url, NS);
  await createEvent(server.url, 'e1', NS);
  labelled = await labelEvent(server.url, 'e1', { step: '2' }, NS);
  await server.close();
  bin = join(await builtPackage(), 'cli.js');
}, 300_000);

afterAll(async () => {
  await killAll();
});

describe('the bundled orchd bin', () => {
  it('state -o yaml: the List at a version, one object named', async () => {
    const all = await orchd('state', '--data-dir', dataDir, '--at', 'HEAD', '-o', 'yaml');
    expect([all.code, all.err]).toEqual([0, '']);
    const [list] = docs(all.out);
    expect(list.kind).toBe('List');
    expect(list.items.map((o: any) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`)).toContain(`${NS}/e1`);
    const one = await orchd('state', '--data-dir', dataDir, '--at', String(labelled), `events/e1`, '-n', NS, '-o', 'yaml');
    expect([one.code, one.err]).toEqual([0, '']);
    expect(docs(one.out)[0].items.map((o: any) => o.metadata.labels)).toEqual([{ step: '2' }]);
  });

  it('log -o yaml: a document per change', async () => {
    const r = await orchd('log', '--data-dir', dataDir, '-n', NS, '-o', 'yaml');
    expect([r.code, r.err]).toEqual([0, '']);
    expect(docs(r.out).map((d) => `${d.type} ${d.object.metadata.name}`)).toEqual(['ADDED e1', 'MODIFIED e1']);
  });

  it('history -o yaml: each version whole, not JSON patches', async () => {
    const r = await orchd('history', 'events/e1', '-n', NS, '--data-dir', dataDir, '-o', 'yaml');
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out.startsWith('---\n')).toBe(true);
    expect(docs(r.out).map((d) => [d.type, d.object.metadata.labels ?? null])).toEqual([
      ['ADDED', null],
      ['MODIFIED', { step: '2' }],
    ]);
  });

  it('export, fork and diff', async () => {
    const recording = join(work, 'all.orchlog');
    const exported = await orchd('export', '--data-dir', dataDir, '--file', recording);
    expect([exported.code, exported.err]).toEqual([0, `orchd export: the state at 0 and ${labelled} entries to ${labelled} written to ${recording}\n`]);
    const forkDir = join(work, 'fork');
    const forked = await orchd('fork', recording, '--at', String(labelled - 1), '--data-dir', forkDir);
    expect([forked.code, forked.err]).toEqual([0, '']);
    expect(forked.out).toMatch(new RegExp(`^forked .* at ${labelled - 1} into ${forkDir}`));
    const diff = await orchd('diff', '--data-dir', dataDir, String(labelled - 1), String(labelled));
    expect([diff.code, diff.err]).toEqual([1, '']);
    expect(diff.out).toContain('+    step: "2"');
    const across = await orchd('diff', forkDir, dataDir, '-o', 'json-patch');
    expect([across.code, across.err]).toEqual([1, '']);
    expect(
      across.out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).object),
    ).toEqual([`events.events.orch.io/${NS}/e1`]);
  });
});
