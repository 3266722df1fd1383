/** What the encryption-at-rest suites share: configurations, the disk grep, events. */
import { randomBytes } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Level } from 'level';
import { expect } from 'vitest';
import { loadServerConfig, type ServerConfig } from '../../src/config/server-config.js';
import { decodeEntry } from '../../src/log/codec.js';
import { checkpointFile } from '../../src/log/leveldb-log.js';
import { removeCheckpoints } from '../../src/log/checkpoint-file.js';
import { type Running, type ServeOptions } from '../../src/serve.js';
import { call, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';

export const secret = (n = 32) => randomBytes(n).toString('base64');

/** An EncryptionConfiguration for events (events.orch.io) only; namespaces stay unselected. */
export function eventsConfig(providers: string): string {
  return `apiVersion: apiserver.config.orch.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [events.events.orch.io]
    providers:
${providers}`;
}
export const keyed = (type: string, ...keys: [string, string][]) => `      - ${type}:\n          keys:\n${keys.map(([n, s]) => `            - name: ${n}\n              secret: ${s}\n`).join('')}`;
export const kmsProvider = (name: string, endpoint: string, timeout?: string) =>
  `      - kms:\n          apiVersion: v2\n          name: ${name}\n          endpoint: ${endpoint}\n${timeout ? `          timeout: ${timeout}\n` : ''}`;

/** The configuration loaded from a file holding yaml, as the command line loads it. */
export async function configOf(yaml: string): Promise<ServerConfig> {
  const file = join(tempDir('orchd-enc-'), 'enc.yaml');
  await writeFile(file, yaml);
  const loaded = loadServerConfig({ encryption: file });
  if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join('; '));
  return loaded.config;
}

export const start = (dataDir: string, config?: ServerConfig, extra: Partial<ServeOptions> = {}): Promise<Running> =>
  startServer({ dataDir, policyStatus: true, ...(config ? { config } : {}), ...extra });

/** Every byte of every file under dir (the LevelDB files, its log, the checkpoint). */
export async function diskBytes(dir: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) parts.push(await readFile(join(e.parentPath, e.name)));
  }
  return Buffer.concat(parts);
}
export const onDisk = async (dir: string, text: string) => (await diskBytes(dir)).includes(Buffer.from(text));

/** Forces the next start to rebuild its view from the log entries alone. */
export async function dropCheckpoint(dataDir: string): Promise<void> {
  await removeCheckpoints(checkpointFile(join(dataDir, 'log')));
}

/** The stored values of the event entries in the log, in seq order (read raw, not through orchd). */
export async function storedEventValues(dataDir: string): Promise<unknown[]> {
  const db = new Level<Buffer, Buffer>(join(dataDir, 'log'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open();
  const found: unknown[] = [];
  try {
    for await (const v of db.values({ lt: Buffer.from([0xff]) })) {
      const e = decodeEntry(0, v);
      if (e.key.startsWith('events.orch.io/')) found.push(e.value);
    }
  } finally {
    await db.close();
  }
  return found;
}

/** The providers and keys (or plugins) of the event entries in the log. */
export async function entryPrefixes(dataDir: string): Promise<string[]> {
  const found = new Set<string>();
  for (const v of await storedEventValues(dataDir)) found.add(Buffer.isBuffer(v) ? /^orch:enc:[a-z]+:v[12]:[^:]+:/.exec(v.toString('latin1'))![0] : 'plain');
  return [...found].sort();
}

export const EVENTS = '/apis/events.orch.io/v1/namespaces/default/events';
export const event = (name: string, marker: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'events.orch.io/v1',
  kind: 'Event',
  metadata: { name, annotations: { marker }, ...extra },
  eventTime: '2024-01-01T00:00:00.000000Z',
  reportingController: 'orch.io/enc-test',
  reportingInstance: 'enc-1',
  action: 'Create',
  reason: 'Test',
  type: 'Normal',
  regarding: { apiVersion: 'v1', kind: 'Namespace', name: 'default' },
  note: `note ${marker}`,
});
export const marker = () => `MARK${randomBytes(12).toString('hex')}`;

/** Creates an event through the API; returns its resourceVersion. */
export async function create(base: string, name: string, m: string, extra?: Record<string, unknown>): Promise<string> {
  const r = await call(base, 'POST', EVENTS, event(name, m, extra));
  expect(r.status, r.text).toBe(201);
  return r.body.metadata.resourceVersion;
}
