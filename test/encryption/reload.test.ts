import { replaceFile } from '../helpers/replace-file.js';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/observability/logger.js';
import type { Running, ServeOptions } from '../../src/serve.js';
import { encryptionDocument } from '../../src/config/encryption.js';
import { loadDocumentText, problemLine } from '../../src/config/load.js';
import { encryptAtRest } from '../../src/log/encryption/index.js';
import { providerSwap } from '../../src/log/encryption/provider-swap.js';
import { ConfigReloader } from '../../src/config/reloader.js';
import { MemoryLog } from '../../src/log/memory-log.js';
import { LocalKmsPlugin } from '../../bench/peers/local-kms-plugin.js';
import { call } from '../helpers/server.js';
import { builtCli, killAll, spawnCli } from '../server/child.js';
import { configOf, create, entryPrefixes, eventsConfig, EVENTS, keyed, kmsProvider, marker, onDisk, secret, start } from './helpers.js';
import { tempDir } from '../helpers/temp.js';
import { sleep } from '../helpers/poll.js';

/*
 * --encryption-provider-config-automatic-reload: the running orchd re-reads its EncryptionConfiguration
 * file; a valid new one replaces the providers (writes use its first provider, reads find theirs by
 * prefix among its providers), an invalid one is logged and the last good one kept, and both are
 * counted in /metrics.
 */

const servers: Running[] = [];
const plugins: LocalKmsPlugin[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const p of plugins.splice(0)) await p.stop();
});
afterAll(killAll);

/** A running orchd whose encryption file can be rewritten, with the lines it logged. */
async function reloading(yaml: string, extra: Partial<ServeOptions> = {}): Promise<{ s: Running; file: string; dataDir: string; logged: string[] }> {
  const config = await configOf(yaml);
  const file = config.encryption!.file;
  const dataDir = tempDir();
  const logged: string[] = [];
  const note = (msg: string, fields?: Record<string, unknown>) => logged.push(`${msg} ${JSON.stringify(fields ?? {})}`);
  const logger: Logger = { info: note, warn: note, error: note };
  const s = await start(dataDir, config, { logger, encryptionConfigAutomaticReload: true, encryptionReloadIntervalMs: 3_600_000, ...extra });
  servers.push(s);
  return { s, file, dataDir, logged };
}

const reloads = async (url: string, status: 'success' | 'failure'): Promise<number> => {
  const text = (await call(url, 'GET', '/metrics')).text;
  const m = new RegExp(`^apiserver_encryption_config_controller_automatic_reloads_total\\{status="${status}"\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
};

async function stop(s: Running): Promise<void> {
  servers.splice(servers.indexOf(s), 1);
  await s.close();
}

describe('encryption configuration reload', () => {
  it('a valid new file replaces the providers: new writes use its first provider, old values still read by prefix', async () => {
    const aes = keyed('aesgcm', ['key1', secret()]);
    const { s, file, dataDir, logged } = await reloading(eventsConfig(aes));
    const m1 = marker();
    const rv1 = await create(s.url, 'e1', m1);
    expect(await s.encryptionReloader!.check()).toBe('unchanged');

    await replaceFile(file, eventsConfig(keyed('secretbox', ['key2', secret()]) + aes));
    expect(await s.encryptionReloader!.check()).toBe('reloaded');
    expect(logged.some((l) => l.startsWith('encryption configuration reloaded'))).toBe(true);
    expect(await reloads(s.url, 'success')).toBe(1);
    expect((await call(s.url, 'GET', '/metrics')).text).toMatch(/^apiserver_encryption_config_controller_automatic_reload_last_timestamp_seconds\{status="success"\} \d+(\.\d+)?$/m);

    const m2 = marker();
    await create(s.url, 'e2', m2);
    // e1's stored value is read back through the new configuration's aesgcm key (by its prefix).
    const old = await call(s.url, 'GET', `${EVENTS}?resourceVersion=${rv1}&resourceVersionMatch=Exact`);
    expect(old.status, old.text).toBe(200);
    expect(old.body.items.map((i: any) => i.metadata.annotations.marker)).toEqual([m1]);
    await stop(s);
    expect(await entryPrefixes(dataDir)).toEqual(['orch:enc:aesgcm:v1:key1:', 'orch:enc:secretbox:v1:key2:']);
    expect(await onDisk(dataDir, m2)).toBe(false);
  });

  it('an invalid file is logged and counted, and the last good configuration keeps serving', async () => {
    const { s, file, dataDir, logged } = await reloading(eventsConfig(keyed('aesgcm', ['key1', secret()])));
    await replaceFile(file, eventsConfig(keyed('aesgcm', ['key1', Buffer.from('short').toString('base64')])));
    expect(await s.encryptionReloader!.check()).toBe('failed');
    const line = logged.find((l) => l.startsWith('encryption configuration not reloaded: keeping the last good one'));
    expect(line).toContain('resources[0].providers[0].aesgcm.keys[0].secret: Invalid value');
    expect(await reloads(s.url, 'failure')).toBe(1);
    expect(await reloads(s.url, 'success')).toBe(0);
    // The same bad text is not counted again; a new bad one is.
    expect(await s.encryptionReloader!.check()).toBe('unchanged');
    await replaceFile(file, 'kind: EncryptionConfiguration\n');
    expect(await s.encryptionReloader!.check()).toBe('failed');
    expect(await reloads(s.url, 'failure')).toBe(2);

    const m = marker();
    await create(s.url, 'e1', m);
    await stop(s);
    expect(await entryPrefixes(dataDir)).toEqual(['orch:enc:aesgcm:v1:key1:']);
    expect(await onDisk(dataDir, m)).toBe(false);
  });

  it('is re-read on its own every interval, and can move writes to a kms plugin', async () => {
    const p = new LocalKmsPlugin(join(tempDir(), 'kms.sock'));
    plugins.push(p);
    await p.start();
    const aes = keyed('aesgcm', ['key1', secret()]);
    const { s, file, dataDir } = await reloading(eventsConfig(aes), { encryptionReloadIntervalMs: 100, kmsTimings: { pollIntervalMs: 100, failedPollIntervalMs: 100 } });
    await create(s.url, 'e1', marker());
    await replaceFile(file, eventsConfig(kmsProvider('plugin', p.endpoint) + aes));
    const deadline = Date.now() + 10_000;
    while ((await reloads(s.url, 'success')) === 0) {
      if (Date.now() > deadline) throw new Error('the file was not reloaded');
      await sleep(50);
    }
    await create(s.url, 'e2', marker());
    expect((await call(s.url, 'GET', '/readyz')).status).toBe(200);
    await stop(s);
    expect(await entryPrefixes(dataDir)).toEqual(['orch:enc:aesgcm:v1:key1:', 'orch:enc:kms:v2:plugin:']);
  });
});

describe('EncryptionReloader', () => {
  it('keeps the last good providers when the new KMS plugin does not answer in time, and tries the same file again', async () => {
    const aes = keyed('aesgcm', ['key1', secret()]);
    const config = await configOf(eventsConfig(aes));
    const file = config.encryption!.file;
    const log = encryptAtRest(new MemoryLog(), config.encryption!.value);
    await log.open();
    const failures: string[][] = [];
    const reloader = new ConfigReloader(log.providers, {
      ...providerSwap(log, { healthWaitMs: 300 }),
      file,
      text: eventsConfig(aes),
      parse: (text) => {
        const r = loadDocumentText(file, text, encryptionDocument);
        return r.ok ? { ok: true, value: r.document.value } : { ok: false, problems: r.problems.map(problemLine) };
      },
      onFailed: (problems) => failures.push(problems),
    });
    try {
      const socket = join(tempDir(), 'kms.sock');
      await replaceFile(file, eventsConfig(kmsProvider('late', `unix://${socket}`) + aes));
      expect(await reloader.check()).toBe('failed');
      expect(failures[0].join('\n')).toContain('health check for new transformers failed: failed to perform status section of the healthz check for KMS Provider late');
      // Writes still go out under the last good configuration's aesgcm key.
      await log.append({ type: 'put', key: 'events.orch.io/events/default/e1', value: { metadata: { name: 'e1' } } }).durable;
      const stored = (await log.inner.get(log.lastSeq))!.value as Uint8Array;
      expect(Buffer.from(stored).toString('latin1')).toMatch(/^orch:enc:aesgcm:v1:key1:/);
      // The plugin comes up: the same file is tried again and now replaces the providers.
      const p = new LocalKmsPlugin(socket);
      plugins.push(p);
      await p.start();
      expect(await reloader.check()).toBe('reloaded');
    } finally {
      reloader.close();
      await log.close();
    }
  });
});

describe('orchd serve (built) with encryption flags', () => {
  it('is in the help, and refused without --encryption-provider-config', async () => {
    const cli = await builtCli();
    const help = spawnCli(cli, ['serve', '--help']);
    await help.exited;
    expect(help.output.stdout).toContain('--encryption-provider-config-automatic-reload');
    const bad = spawnCli(cli, ['serve', '--encryption-provider-config-automatic-reload', '--data-dir', tempDir()]);
    expect((await bad.exited).code).toBe(2);
    expect(bad.output.stderr).toContain('--encryption-provider-config-automatic-reload must be set with --encryption-provider-config');
  }, 120_000);

  it('serves with a kms provider from the command line', async () => {
    const cli = await builtCli();
    const p = new LocalKmsPlugin(join(tempDir(), 'kms.sock'));
    plugins.push(p);
    await p.start();
    const file = join(tempDir(), 'enc.yaml');
    await replaceFile(file, eventsConfig(kmsProvider('plugin', p.endpoint)));
    const dataDir = tempDir();
    const child = spawnCli(cli, ['serve', '--port', '0', '--data-dir', dataDir, '--encryption-provider-config', file, '--encryption-provider-config-automatic-reload']);
    const ready = await child.waitForLine((l) => l.msg === 'ready');
    const m = marker();
    await create(String(ready.url), 'e1', m);
    child.signal('SIGTERM');
    expect((await child.exited).code).toBe(0);
    expect(await entryPrefixes(dataDir)).toEqual(['orch:enc:kms:v2:plugin:']);
    expect(await onDisk(dataDir, m)).toBe(false);
  }, 120_000);
});
