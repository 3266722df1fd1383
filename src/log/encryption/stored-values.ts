import { packJson, unpackJson } from '../codec.js';
import { IDENTITY } from './identity.js';
import type { ResourceProviders } from './providers.js';
import { ENCRYPTED_PREFIX, TransformError, type Transformer } from './transformer.js';

/** The collection (`<group>/<plural>`) of a storage key `<group>/<plural>/<namespace>/<name>`. */
export function collectionOfKey(key: string): string {
  return key.slice(0, key.indexOf('/', key.indexOf('/') + 1));
}

/** The authenticated context of a sealed checkpoint (values use their storage key). */
const CHECKPOINT_CONTEXT = Buffer.from('orchd/checkpoint', 'utf8');

const isSealed = (v: unknown): v is Uint8Array => v instanceof Uint8Array;
const bytesOf = (v: Uint8Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
const hasPrefix = (t: Transformer, bytes: Buffer): boolean => bytes.length >= t.prefix.length && t.prefix.equals(bytes.subarray(0, t.prefix.length));

/**
 * The values of log records as they go to disk. An encrypted value is msgpack binary: the prefix and
 * the sealed msgpack of the object; a plain one is the object itself, as without encryption. The
 * storage key stays plain in the record, so views and watches route without decrypting, and it is
 * the authenticated context of the value.
 */
export class StoredValues {
  constructor(readonly providers: ResourceProviders) {}

  get encryptsAny(): boolean {
    return this.providers.encryptsAny;
  }

  get readsPlainEverywhere(): boolean {
    return this.providers.readsPlainEverywhere;
  }

  /** What to store for value under key: value itself (identity, unselected) or its sealed bytes. */
  seal(key: string, value: unknown): unknown {
    const chain = this.providers.forCollection(collectionOfKey(key));
    if (!chain || chain.writer === IDENTITY) return value;
    return chain.writer.seal(packJson(value), Buffer.from(key, 'utf8'));
  }

  /** Whether seal() would store key's values plainly (no copy to keep while a write is on its way). */
  storesPlainly(key: string): boolean {
    const chain = this.providers.forCollection(collectionOfKey(key));
    return !chain || chain.writer === IDENTITY;
  }

  /** Whether some provider does asynchronous work before open() (a KMS plugin): prepare() is a no-op otherwise. */
  get needsPreparing(): boolean {
    return this.providers.kms.length > 0;
  }

  /**
   * Lets the providers that must do asynchronous work before open() (kms: the plugin opens data
   * keys) do it for these stored values, all at once. Values with nothing to prepare cost nothing.
   */
  async prepare(values: readonly { key: string; value: unknown }[]): Promise<void> {
    const work: Promise<void>[] = [];
    for (const { key, value } of values) {
      if (!isSealed(value)) continue;
      const bytes = bytesOf(value);
      for (const t of this.providers.forCollection(collectionOfKey(key))?.readers ?? []) if (t.prepare && hasPrefix(t, bytes)) work.push(t.prepare(bytes));
    }
    await Promise.all(work);
  }

  /** prepare() for a stored checkpoint. */
  async prepareCheckpoint(stored: Buffer): Promise<void> {
    await Promise.all(this.providers.allReaders.filter((t) => t.prepare && hasPrefix(t, stored)).map((t) => t.prepare!(stored)));
  }

  /** A checkpoint's bytes as stored: sealed whole by the first encrypting provider, or as they are. */
  sealCheckpoint(data: Buffer): Buffer {
    const w = this.providers.checkpointWriter;
    return w ? w.seal(data, CHECKPOINT_CONTEXT) : data;
  }

  /** A stored checkpoint's bytes, opened by the key its prefix names. Throws TransformError. */
  openCheckpoint(stored: Buffer): Buffer {
    if (!stored.subarray(0, ENCRYPTED_PREFIX.length).equals(Buffer.from(ENCRYPTED_PREFIX))) return stored;
    const errors: string[] = [];
    for (const t of this.providers.allReaders) {
      if (!hasPrefix(t, stored)) continue;
      try {
        return t.open(stored, CHECKPOINT_CONTEXT);
      } catch (err) {
        errors.push(err instanceof Error ? err.message : String(err));
      }
    }
    throw new TransformError(errors.length > 0 ? errors.join(', ') : 'no matching prefix found');
  }

  /** Whether a plain (not sealed) value stored under key opens as itself, as open() would decide. */
  readsPlain(key: string): boolean {
    const chain = this.providers.forCollection(collectionOfKey(key));
    return !chain || chain.readsPlain;
  }

  /** The value stored under key, opened. Throws TransformError for a value no configured provider opens. */
  open(key: string, stored: unknown): unknown {
    const chain = this.providers.forCollection(collectionOfKey(key));
    if (!isSealed(stored)) {
      // Plain data where the list has no identity provider: kube-apiserver finds no prefix either.
      if (chain && !chain.readsPlain) throw new TransformError('no matching prefix found');
      return stored;
    }
    const bytes = bytesOf(stored);
    const errors: string[] = [];
    for (const t of chain?.readers ?? []) {
      if (!hasPrefix(t, bytes)) continue;
      let plain: Buffer;
      try {
        plain = t.open(bytes, Buffer.from(key, 'utf8'));
      } catch (err) {
        errors.push(err instanceof Error ? err.message : String(err));
        continue;
      }
      return decodePlain(plain);
    }
    if (errors.length > 0) throw new TransformError(errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`);
    if (!bytes.subarray(0, ENCRYPTED_PREFIX.length).equals(Buffer.from(ENCRYPTED_PREFIX))) throw new TransformError('stored data is neither plain nor encrypted');
    throw new TransformError('no matching prefix found');
  }
}

/**
 * The value a provider opened: any JSON value, as the log contract promises. An AEAD provider only
 * opens what it sealed; bytes that AES-CBC unpadded under a wrong key are refused when they are not
 * exactly one msgpack value (unpackJson throws on bytes left over), so garbage rarely passes.
 */
function decodePlain(plain: Buffer): unknown {
  if (plain.length === 0) throw new TransformError('object not decodable');
  try {
    return unpackJson(plain);
  } catch (err) {
    throw new TransformError('object not decodable', { cause: err });
  }
}
