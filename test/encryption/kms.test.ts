import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/observability/logger.js';
import { decodeEncryptedObject } from '../../src/log/encryption/kms/encrypted-object.js';
import type { Running, ServeOptions } from '../../src/serve.js';
import { LocalKmsPlugin } from '../../bench/peers/local-kms-plugin.js';
import { rewriteEncryption } from '../../src/cli/rewrite-encryption.js';
import { call } from '../helpers/server.js';
import { configOf, create, dropCheckpoint, entryPrefixes, event, eventsConfig, EVENTS, keyed, kmsProvider, marker, onDisk, secret, start, storedEventValues } from './helpers.js';
import { tempDir } from '../helpers/temp.js';
import { eventually, sleep } from '../helpers/poll.js';

/*
 * KMS v2 end to end: orchd on loopback, a real KMS v2 plugin (bench/peers/local-kms-plugin.ts, gRPC on a unix
 * socket in a temp folder), the real LevelDB log. Timings are shortened so polls, expiries and cache
 * TTLs happen within a test.
 */

const PREFIX = 'orch:enc:kms:v2:plugin:';
const FAST: ServeOptions['kmsTimings'] = { pollIntervalMs: 100, failedPollIntervalMs: 100 };

const plugins: LocalKmsPlugin[] = [];
const servers: Running[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close().catch(() => undefined);
  for (const p of plugins.splice(0)) await p.stop();
});

async function plugin(): Promise<LocalKmsPlugin> {
  const p = new LocalKmsPlugin(join(tempDir(), 'kms.sock'));
  plugins.push(p);
  await p.start();
  return p;
}

async function serveWith(dataDir: string, p: LocalKmsPlugin, extra: Partial<ServeOptions> = {}, timeout?: string): Promise<Running> {
  const s = await start(dataDir, await configOf(eventsConfig(kmsProvider('plugin', p.endpoint, timeout))), { kmsTimings: FAST, ...extra });
  servers.push(s);
  return s;
}

async function stop(s: Running): Promise<void> {
  servers.splice(servers.indexOf(s), 1);
  await s.close();
}

/**
 * A server restarted with the given data-key cache TTL over Event e1 written twice: its first
 * version (rv1, no labels) is history, sealed with a data key the restart has to open again.
 */
async function restartedWithTwoVersions(p: LocalKmsPlugin, seedCacheTtlMs: number): Promise<{ s: Running; rv1: string }> {
  const dataDir = tempDir();
  const first = await serveWith(dataDir, p);
  const rv1 = await create(first.url, 'e1', marker());
  const upd = await call(first.url, 'PATCH', `${EVENTS}/e1`, { metadata: { labels: { v: '2' } } }, { 'Content-Type': 'application/merge-patch+json' });
  expect(upd.status, upd.text).toBe(200);
  await stop(first);
  return { s: await serveWith(dataDir, p, { kmsTimings: { ...FAST, seedCacheTtlMs } }), rv1 };
}

/** Polls until check() holds; fails after 5 s naming what. */
const until = (what: string, check: () => Promise<boolean> | boolean) => eventually(check, { timeoutMs: 5000, stepMs: 50, what });

/** The key ids and sealed data keys of the kms values of the event entries, in log order. */
async function envelopes(dataDir: string): Promise<{ keyId: string; dek: string }[]> {
  return (await storedEventValues(dataDir)).map((v) => {
    const o = decodeEncryptedObject((v as Buffer).subarray(PREFIX.length));
    return { keyId: o.keyId, dek: o.encryptedDEKSource.toString('base64') };
  });
}

describe('kms v2 at rest', () => {
  it('stores no plaintext, reads back, and after a restart (empty data key cache) opens the data key through the plugin', async () => {
    const p = await plugin();
    const dataDir = tempDir();
    const m = marker();
    let s = await serveWith(dataDir, p);
    // One data key for the whole run: sealed once by the plugin, not per write.
    expect(p.calls.encrypt).toBe(1);
    await create(s.url, 'e1', m);
    await create(s.url, 'e2', marker());
    expect((await call(s.url, 'GET', `${EVENTS}/e1`)).body.metadata.annotations.marker).toBe(m);
    expect(await onDisk(dataDir, m)).toBe(false);
    expect(await onDisk(dataDir, PREFIX)).toBe(true);
    expect(p.calls.encrypt).toBe(1);
    expect(p.calls.decrypt).toBe(0);
    await stop(s);
    expect(await onDisk(dataDir, m)).toBe(false);
    const written = await envelopes(dataDir);
    expect(written.map((e) => e.keyId)).toEqual([p.keyId, p.keyId]);
    expect(new Set(written.map((e) => e.dek)).size).toBe(1);

    // Replayed from the log alone (no checkpoint): every entry needs the old data key.
    await dropCheckpoint(dataDir);
    s = await serveWith(dataDir, p);
    const got = await call(s.url, 'GET', `${EVENTS}/e1`);
    expect(got.status, got.text).toBe(200);
    expect(got.body.note).toBe(`note ${m}`);
    // Asked once for the one old data key, however many entries it sealed.
    expect(p.calls.decrypt).toBe(1);
    // The new run writes under a data key of its own.
    await create(s.url, 'e3', marker());
    await stop(s);
    const after = await envelopes(dataDir);
    expect(after[2].dek).not.toBe(after[0].dek);
  });

  it('makes a new data key when the plugin key id changes; values of the old one still read', async () => {
    const p = await plugin();
    const dataDir = tempDir();
    const s = await serveWith(dataDir, p);
    const old = p.keyId;
    await create(s.url, 'before', marker());
    const rotated = p.rotate();
    // The next Status poll sees the new key id and has a new data key sealed under it.
    await until('the new data key', () => p.calls.encrypt === 2);
    // The plugin counts the Encrypt when it is asked; the server takes the new key once the answer
    // has come back over gRPC, a few turns of its event loop later.
    await sleep(250);
    await create(s.url, 'after', marker());
    await stop(s);
    const [a, b] = await envelopes(dataDir);
    expect(a.keyId).toBe(old);
    expect(b.keyId).toBe(rotated);
    expect(b.dek).not.toBe(a.dek);
    await dropCheckpoint(dataDir);
    const again = await serveWith(dataDir, p);
    const list = await call(again.url, 'GET', EVENTS);
    expect(list.status, list.text).toBe(200);
    expect(list.body.items.map((i: any) => i.metadata.name)).toEqual(['after', 'before']);
    expect(p.calls.decrypt).toBe(2);
  });

  it('waits for a plugin that is down at start, with /readyz failing the kms-providers check, and serves once it is up', async () => {
    const p = new LocalKmsPlugin(join(tempDir(), 'kms.sock'));
    plugins.push(p);
    const dataDir = tempDir();
    let url = '';
    const logger: Logger = {
      info: (msg, fields) => {
        if (msg === 'listening') url = String(fields?.url);
      },
      warn() {},
      error() {},
    };
    const starting = serveWith(dataDir, p, { logger });
    await until('listening', () => url !== '');
    await until('a failed kms-providers check', async () =>
      (await call(url, 'GET', '/readyz')).text.includes('[-]kms-providers failed: failed to perform status section of the healthz check for KMS Provider plugin'),
    );
    expect((await call(url, 'GET', EVENTS)).status).toBe(503);
    // /healthz runs the check too; /livez does not (the process is alive and retrying).
    const healthz = await call(url, 'GET', '/healthz');
    expect(healthz.status).toBe(500);
    expect(healthz.text).toMatch(/^\[-\]kms-providers failed: .*\nhealthz check failed$/);
    expect((await call(url, 'GET', '/livez')).status).toBe(200);
    await p.start();
    const s = await starting;
    expect((await call(s.url, 'GET', '/readyz')).status).toBe(200);
    await create(s.url, 'e1', marker());
  });

  it('keeps writing while the plugin is briefly down, then fails writes clearly once the data key expires, and recovers', async () => {
    const p = await plugin();
    const dataDir = tempDir();
    const s = await serveWith(dataDir, p, { kmsTimings: { ...FAST, writeKeyTtlMs: 1500 } });
    await create(s.url, 'e1', marker());
    await p.stop();
    await until('a failed kms-providers check', async () => (await call(s.url, 'GET', '/readyz')).status === 500);
    // Within the TTL of the last healthy poll the current data key still seals.
    await create(s.url, 'e2', marker());
    // Objects already read stay readable: they are held open in memory.
    expect((await call(s.url, 'GET', `${EVENTS}/e1`)).status).toBe(200);
    let failed: any;
    let n = 0;
    await until('a refused write', async () => {
      const r = await call(s.url, 'POST', EVENTS, event(`late-${n++}`, marker()));
      failed = r;
      return r.status !== 201;
    });
    expect(failed.status).toBe(500);
    expect(failed.body).toMatchObject({ kind: 'Status', reason: 'InternalError', code: 500 });
    expect(failed.body.message).toMatch(/^Internal error occurred: kms provider plugin: encryptedDEKSource with keyID hash "sha256:[0-9a-f]{64}" expired at /);
    await p.start();
    await until('writes again', async () => (await call(s.url, 'GET', '/readyz')).status === 200);
    await create(s.url, 'e3', marker());
  });

  it('stops cleanly while the plugin is down past the data key expiry (no checkpoint then), and the next start has every write', async () => {
    const p = await plugin();
    const dataDir = tempDir();
    const s = await serveWith(dataDir, p, { kmsTimings: { ...FAST, writeKeyTtlMs: 500 } });
    await create(s.url, 'e1', marker());
    const written = ['e1'];
    await p.stop();
    let n = 0;
    await until('a refused write', async () => {
      const name = `x-${n++}`;
      const r = await call(s.url, 'POST', EVENTS, event(name, marker()));
      if (r.status === 201) written.push(name);
      return r.status === 500;
    });
    await stop(s);
    await p.start();
    const again = await serveWith(dataDir, p);
    const list = await call(again.url, 'GET', EVENTS);
    expect(list.status, list.text).toBe(200);
    expect(list.body.items.map((i: any) => i.metadata.name).sort()).toEqual(written.sort());
  });

  it('tries a failed Decrypt that may pass again, so a plugin hiccup at the replay does not leave corrupt objects', async () => {
    const p = await plugin();
    const dataDir = tempDir();
    let s = await serveWith(dataDir, p);
    await create(s.url, 'e1', marker());
    await stop(s);
    await dropCheckpoint(dataDir);
    p.failNextDecrypts = 2;
    s = await serveWith(dataDir, p);
    expect((await call(s.url, 'GET', `${EVENTS}/e1`)).status).toBe(200);
    expect(p.calls.decrypt).toBe(3);
  });

  it('a data key the plugin does not open in time is a corrupt object (500) after the timeout, not a hang', async () => {
    const p = await plugin();
    const dataDir = tempDir();
    let s = await serveWith(dataDir, p, {}, '300ms');
    await create(s.url, 'e1', marker());
    await stop(s);
    await dropCheckpoint(dataDir);
    p.decryptDelayMs = 5000;
    const started = Date.now();
    s = await serveWith(dataDir, p, {}, '300ms');
    expect(Date.now() - started).toBeLessThan(3000);
    const get = await call(s.url, 'GET', `${EVENTS}/e1`);
    expect(get.status).toBe(500);
    expect(get.body.message).toContain('StorageError: corrupt object');
    expect(get.body.message).toContain('failed to decrypt DEK, error: 4 DEADLINE_EXCEEDED');
    // New writes are unaffected: they use this run's data key.
    await create(s.url, 'e2', marker());
  });

  it('a data key the plugin refuses is a corrupt object; the unsafe delete removes it', async () => {
    const p = await plugin();
    const dataDir = tempDir();
    let s = await serveWith(dataDir, p);
    await create(s.url, 'e1', marker());
    await stop(s);
    await dropCheckpoint(dataDir);
    // Another plugin (other keys) behind the same name and socket: the stored data key is not its.
    await p.stop();
    const other = new LocalKmsPlugin(p.socket);
    plugins.push(other);
    await other.start();
    s = await serveWith(dataDir, other);
    const get = await call(s.url, 'GET', `${EVENTS}/e1`);
    expect(get.status).toBe(500);
    expect(get.body.message).toContain('failed to decrypt DEK, error: 3 INVALID_ARGUMENT: the ciphertext does not open under its key');
    const unsafe = await call(s.url, 'DELETE', `${EVENTS}/e1?ignoreStoreReadErrorWithClusterBreakingPotential=true`);
    expect(unsafe.status, unsafe.text).toBe(200);
    expect((await call(s.url, 'GET', `${EVENTS}/e1`)).status).toBe(404);
  });

  it('drops an open data key from the cache after its TTL: a later history read asks the plugin again', async () => {
    const p = await plugin();
    const { s, rv1 } = await restartedWithTwoVersions(p, 400);
    const exact = () => call(s.url, 'GET', `${EVENTS}?resourceVersion=${rv1}&resourceVersionMatch=Exact`);
    // The checkpoint needed the old data key; the read of the old version right after finds it cached.
    const opened = p.calls.decrypt;
    expect(opened).toBe(1);
    let r = await exact();
    expect(r.status, r.text).toBe(200);
    expect(r.body.items[0].metadata.labels).toBeUndefined();
    expect(p.calls.decrypt).toBe(opened);
    await new Promise((res) => setTimeout(res, 600));
    r = await exact();
    expect(r.status, r.text).toBe(200);
    expect(r.body.items[0].metadata.labels).toBeUndefined();
    expect(p.calls.decrypt).toBe(opened + 1);
  });

  it('a past version whose data key is not cached fails as a corrupt object (500) while the plugin is down, and reads once it is back', async () => {
    const p = await plugin();
    const { s, rv1 } = await restartedWithTwoVersions(p, 300);
    await new Promise((res) => setTimeout(res, 500));
    await p.stop();
    const exact = `${EVENTS}?resourceVersion=${rv1}&resourceVersionMatch=Exact`;
    const failed = await call(s.url, 'GET', exact);
    expect(failed.status).toBe(500);
    expect(failed.body).toMatchObject({ kind: 'Status', reason: 'InternalError', code: 500 });
    expect(failed.body.message).toContain(
      `StorageError: corrupt object, Code: 7, Key: events.orch.io/events/default/e1, ResourceVersion: 0, AdditionalErrorMsg: data from the storage is not transformable revision=${rv1}: failed to decrypt DEK, error: 14 UNAVAILABLE`,
    );
    // A watch replayed from that version meets the same error as an ERROR event.
    const watch = await call(s.url, 'GET', `${EVENTS}?watch=true&resourceVersion=${Number(rv1) - 1}`);
    const events = watch.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.at(-1)).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 500 } });
    expect(events.at(-1).object.message).toContain('failed to decrypt DEK');
    // The object itself is held open in memory and reads as ever.
    expect((await call(s.url, 'GET', `${EVENTS}/e1`)).status).toBe(200);
    await p.start();
    await until('the past version reads again', async () => (await call(s.url, 'GET', exact)).status === 200);
  });

  it('the rewrite tool moves values from aesgcm to the kms plugin', async () => {
    const p = await plugin();
    const dataDir = tempDir();
    const aes = keyed('aesgcm', ['key1', secret()]);
    let s = await start(dataDir, await configOf(eventsConfig(aes)));
    const m = marker();
    await create(s.url, 'e1', m);
    await s.close();
    const both = await configOf(eventsConfig(kmsProvider('plugin', p.endpoint) + aes));
    const result = await rewriteEncryption({ dataDir, config: both.encryption!.value });
    expect(result.corrupt).toEqual([]);
    expect(await entryPrefixes(dataDir)).toEqual([PREFIX]);
    const copy = tempDir();
    await cp(dataDir, copy, { recursive: true });
    await dropCheckpoint(copy);
    s = await serveWith(copy, p);
    expect((await call(s.url, 'GET', `${EVENTS}/e1`)).body.metadata.annotations.marker).toBe(m);
    expect(await onDisk(copy, m)).toBe(false);
  });
});
