/** `orchd serve --faults FILE` as a user runs it: a bad file stops the start with one line; a good one is in force. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtCli, isReady, killAll, spawnCli, spawnServer } from '../server/child.js';
import { readFaultJournal } from '../../src/faults/journal.js';
import { call } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';

afterAll(() => killAll());

const FILE = `apiVersion: apiserver.config.orch.io/v1alpha1
kind: FaultConfiguration
seed: 7
rules:
- name: no-namespaces
  match: { verbs: [get], resources: [namespaces], names: [default] }
  first: 1
  inject: { status: 503 }
`;

describe('orchd serve --faults', () => {
  it('refuses a bad file at start with one line naming the field path, exit 1', async () => {
    const dir = tempDir('orchd-faults-cli-');
    const file = join(dir, 'faults.yaml');
    await writeFile(file, FILE.replace('first: 1', 'probability: 2'));
    const child = spawnCli(await builtCli(), ['serve', '--storage', 'memory', '--port', '0', '--faults', file], { cwd: dir });
    expect((await child.exited).code).toBe(1);
    expect(child.output.stderr).toContain(`${file}: rules[0].probability: Invalid value: 2: must be between 0 and 1\n`);
    expect(child.lines.some((l) => l.msg === 'listening')).toBe(false);
  });

  it("serves with the file's rules in force, and journals each fault in the data folder", async () => {
    const dir = tempDir('orchd-faults-cli-');
    const file = join(dir, 'faults.yaml');
    await writeFile(file, FILE);
    const dataDir = join(dir, 'data');
    const server = await spawnServer(dataDir, ['--faults', file]);
    await server.waitForLine(isReady);
    expect((await call(server.url, 'GET', '/debug/faults')).body).toMatchObject({ kind: 'FaultConfiguration', seed: 7, rules: [{ name: 'no-namespaces' }] });
    const refused = await call(server.url, 'GET', '/api/v1/namespaces/default');
    expect(refused.status).toBe(503);
    expect((await call(server.url, 'GET', '/api/v1/namespaces/default')).status).toBe(200);
    server.signal('SIGTERM');
    expect((await server.exited).code).toBe(0);
    expect(readFaultJournal(dataDir)).toEqual([
      expect.objectContaining({ rule: 'no-namespaces', fault: 'status:503', request: expect.objectContaining({ verb: 'get', resource: 'namespaces', name: 'default' }) }),
    ]);
  });
});
