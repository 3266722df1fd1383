import { randomBytes, randomUUID } from 'node:crypto';
import { prefixOf, TransformError, type Transformer } from '../transformer.js';
import { decodeEncryptedObject, encodeEncryptedObject, encryptedObjectProblem, keyIdHash, keyIdProblemOf, seedCacheKey, type EncryptedObject } from './encrypted-object.js';
import { mayPass, type KmsPluginClient } from './plugin-client.js';
import { SeedCache } from './seed-cache.js';
import { openWithSeed, sealWithSeed, SEED_BYTES } from './seed-gcm.js';

/** kube-apiserver's KMS v2 timings; tests shorten them. */
export interface KmsTimings {
  /** How often the plugin's Status is polled while it is healthy. */
  pollIntervalMs: number;
  /** …and while it is not, so a plugin that comes back is found soon. */
  failedPollIntervalMs: number;
  /**
   * Writes keep using the current data key for this long after the last healthy poll, then fail:
   * a plugin whose key changed while it could not be asked must not see writes under the old key
   * forever (kube-apiserver: 3 minutes, so a storage migration started later is sure to use the new key).
   */
  writeKeyTtlMs: number;
  /** How long an open seed stays cached after its last use. */
  seedCacheTtlMs: number;
  now: () => number;
}

export const KMS_TIMINGS: KmsTimings = {
  pollIntervalMs: 60_000,
  failedPollIntervalMs: 10_000,
  writeKeyTtlMs: 3 * 60_000,
  seedCacheTtlMs: 24 * 3_600_000,
  now: Date.now,
};

/** Decrypt calls for one seed at most, when the failures may pass (see decryptSeed). */
const DECRYPT_ATTEMPTS = 3;
const DECRYPT_RETRY_PAUSE_MS = 100;

/** The data key writes use: a seed, sealed by the plugin under the key id its Status named. */
interface WriteKey {
  seed: Buffer;
  sealed: Omit<EncryptedObject, 'encryptedData'>;
  cacheKey: string;
  /** Past this (ms), writes fail until a healthy poll renews it. */
  expires: number;
}

/**
 * A `kms` provider of apiVersion v2: envelope encryption through a KMS plugin. A data key seed is
 * made here and sealed once by the plugin (Encrypt); each value is then sealed locally under a key
 * derived from the seed (seed-gcm.ts) and stored with the sealed seed, the plugin's key id and its
 * annotations behind `orch:enc:kms:v2:<name>:`. The seed is replaced when the key id that Status
 * reports changes. Reading a value needs its seed open: from the cache, or from the plugin (Decrypt).
 *
 * The log seals and opens values synchronously (a write is encoded the moment it is appended, and
 * an entry is opened as it is read), while the plugin answers asynchronously. So writes use the
 * current seed, kept ready by the poll, and never wait for the plugin; reads go in two steps: the
 * log first awaits prepare() over a page of stored values, which asks the plugin for the seeds not
 * cached (once per seed however many values share it), then opens the page synchronously. A seed
 * the plugin would not open makes open() fail with the plugin's error, and the value is reported as
 * a corrupt object, as kube-apiserver reports a value it cannot transform.
 */
export class KmsV2Transformer implements Transformer {
  readonly prefix: Buffer;
  private writeKey: WriteKey | undefined;
  private readonly seeds: SeedCache;
  private readonly decrypting = new Map<string, Promise<void>>();
  /** Why the plugin did not open a seed, for the values that needed it. */
  private readonly decryptFailures = new Map<string, string>();
  private problem: string | undefined = 'the KMS plugin has not answered yet';
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  private closed = false;
  private readonly firstHealthy: Promise<void>;
  private markHealthy!: () => void;

  constructor(
    readonly name: string,
    private readonly client: KmsPluginClient,
    private readonly timings: KmsTimings = KMS_TIMINGS,
    private readonly onHealth?: (problem: string | undefined) => void,
  ) {
    this.prefix = prefixOf('kms', name, 'v2');
    this.seeds = new SeedCache(timings.seedCacheTtlMs, timings.now);
    this.firstHealthy = new Promise((resolve) => (this.markHealthy = resolve));
  }

  /** Starts polling the plugin: at once, then every interval. */
  start(): void {
    if (this.started) return;
    this.started = true;
    void this.poll();
  }

  /** Settles once the plugin has been healthy and a data key made: writes can then be sealed. */
  ready(): Promise<void> {
    return this.firstHealthy;
  }

  /** Why the kms-providers health check fails for this plugin; undefined when it passes. */
  health(): string | undefined {
    return this.problem;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.client.close();
  }

  private async poll(): Promise<void> {
    // A plugin's answer this code did not foresee must not end the polling.
    const problem = await this.check().catch((err: unknown) => `kmsv2 Provider ${this.name} is not healthy, error: ${messageOf(err)}`);
    if (this.closed) return;
    const changed = problem !== this.problem;
    this.problem = problem;
    if (problem === undefined) this.markHealthy();
    if (changed) this.onHealth?.(problem);
    this.timer = setTimeout(() => void this.poll(), problem === undefined ? this.timings.pollIntervalMs : this.timings.failedPollIntervalMs);
    this.timer.unref();
  }

  /** One Status poll: the plugin's health, and a new data key when its key id changed. */
  private async check(): Promise<string | undefined> {
    let status;
    try {
      status = await this.client.status();
    } catch (err) {
      return `failed to perform status section of the healthz check for KMS Provider ${this.name}, error: ${messageOf(err)}`;
    }
    const errors: string[] = [];
    if (status.healthz !== 'ok') errors.push(`got unexpected healthz status: ${status.healthz}`);
    if (status.version !== 'v2') errors.push(`expected KMSv2 API version v2, got ${status.version}`);
    const keyIdProblem = keyIdProblemOf(status.keyId);
    if (keyIdProblem) errors.push(`got invalid KMSv2 KeyID hash ${JSON.stringify(keyIdHash(status.keyId))}: ${keyIdProblem}`);
    else {
      const rotation = await this.rotateOnKeyIdChange(status.keyId);
      if (rotation) errors.push(rotation);
    }
    return errors.length > 0 ? `kmsv2 Provider ${this.name} is not healthy, error: ${errors.join(', ')}` : undefined;
  }

  /**
   * Keeps the data key while the plugin's key id is the one it was sealed under (and extends how
   * long writes may use it); otherwise makes a new seed and has the plugin seal it. A failed
   * rotation keeps the current key, usable for writes until it expires.
   */
  private async rotateOnKeyIdChange(keyId: string): Promise<string | undefined> {
    // Counted from before the call: the TTL bounds how stale the key id may be.
    const expires = this.timings.now() + this.timings.writeKeyTtlMs;
    const current = this.writeKey;
    if (current && current.sealed.keyId === keyId) {
      current.expires = expires;
      return undefined;
    }
    const seed = randomBytes(SEED_BYTES);
    const uid = randomUUID();
    let sealed: Omit<EncryptedObject, 'encryptedData'>;
    try {
      const r = await this.client.encrypt(seed, uid);
      sealed = { keyId: r.keyId, encryptedDEKSource: r.ciphertext, annotations: r.annotations };
    } catch (err) {
      return `failed to rotate DEK uid=${JSON.stringify(uid)}: failed to encrypt DEK, error: ${messageOf(err)}`;
    }
    const problem = encryptedObjectProblem(sealed);
    if (problem) return `failed to rotate DEK uid=${JSON.stringify(uid)}: ${problem}`;
    if (sealed.keyId !== keyId) {
      return `failed to rotate DEK uid=${JSON.stringify(uid)}: the key id of Encrypt (hash ${JSON.stringify(keyIdHash(sealed.keyId))}) is not the one of Status (hash ${JSON.stringify(keyIdHash(keyId))})`;
    }
    const cacheKey = seedCacheKey(sealed);
    this.seeds.set(cacheKey, seed);
    this.writeKey = { seed, sealed, cacheKey, expires };
    return undefined;
  }

  seal(plain: Buffer, context: Buffer): Buffer {
    const key = this.writeKey;
    if (!key) throw new Error(`kms provider ${this.name}: no data key yet: ${this.problem ?? 'the KMS plugin has not answered yet'}`);
    const now = this.timings.now();
    if (now > key.expires) {
      throw new Error(
        `kms provider ${this.name}: encryptedDEKSource with keyID hash ${JSON.stringify(keyIdHash(key.sealed.keyId))} expired at ${iso(key.expires)} (current time is ${iso(now)})` +
          (this.problem ? `: ${this.problem}` : ''),
      );
    }
    // Reads of what is written now find the seed without asking the plugin.
    this.seeds.set(key.cacheKey, key.seed);
    return Buffer.concat([this.prefix, encodeEncryptedObject({ ...key.sealed, encryptedData: sealWithSeed(key.seed, plain, context) })]);
  }

  open(sealed: Buffer, context: Buffer): Buffer {
    const o = decodeEncryptedObject(sealed.subarray(this.prefix.length));
    const cacheKey = seedCacheKey(o);
    const seed = this.seeds.get(cacheKey);
    if (!seed) throw new TransformError(`failed to decrypt DEK, error: ${this.decryptFailures.get(cacheKey) ?? 'the data key has not been decrypted'}`);
    return openWithSeed(seed, o.encryptedData, context);
  }

  /** Has the plugin open the seed of sealed unless it is cached; never rejects (open() reports failures). */
  async prepare(sealed: Buffer): Promise<void> {
    let o: EncryptedObject;
    try {
      o = decodeEncryptedObject(sealed.subarray(this.prefix.length));
    } catch {
      return;
    }
    const cacheKey = seedCacheKey(o);
    if (this.seeds.get(cacheKey)) return;
    let pending = this.decrypting.get(cacheKey);
    if (!pending) {
      pending = this.decryptSeed(cacheKey, o).finally(() => this.decrypting.delete(cacheKey));
      this.decrypting.set(cacheKey, pending);
    }
    await pending;
  }

  /**
   * orchd opens an object's stored state once, at the replay, and then holds it open in memory: a
   * seed the plugin failed to open makes its objects corrupt until the next start (kube-apiserver
   * instead asks again on every read). So a failure that may pass is tried again, a few times.
   */
  private async decryptSeed(cacheKey: string, o: EncryptedObject): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const seed = await this.client.decrypt({ ciphertext: o.encryptedDEKSource, uid: randomUUID(), keyId: o.keyId, annotations: o.annotations });
        if (seed.length < SEED_BYTES) throw new Error(`invalid seed length ${seed.length} used for key generation`);
        this.seeds.set(cacheKey, seed);
        this.decryptFailures.delete(cacheKey);
        return;
      } catch (err) {
        this.decryptFailures.set(cacheKey, messageOf(err));
        if (attempt >= DECRYPT_ATTEMPTS || !mayPass(err) || this.closed) return;
        await new Promise((resolve) => setTimeout(resolve, DECRYPT_RETRY_PAUSE_MS * attempt));
      }
    }
  }
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
