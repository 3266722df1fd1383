import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { TransformError } from '../transformer.js';

/** The data key seed: 32 random bytes, sealed by the KMS plugin, kept in memory open. */
export const SEED_BYTES = 32;
/** Random per write: with the seed it derives that write's AES-256 key. */
const INFO = 32;
const NONCE = 12;
const TAG = 16;

/**
 * AES-256-GCM under a key derived per write from the seed (HKDF-SHA256 over 32 random bytes), as
 * kube-apiserver's KMS v2 does (its HKDF_SHA256_XNONCE_AES_GCM_SEED): one seed serves every write
 * until the plugin's key changes, without the 2^32-message limit that random 96-bit nonces put on a
 * single AES-GCM key. Stored as info | nonce | ciphertext | tag; context (the storage key) is the
 * authenticated data.
 */
export function sealWithSeed(seed: Buffer, plain: Buffer, context: Buffer): Buffer {
  const info = randomBytes(INFO);
  const nonce = randomBytes(NONCE);
  const c = createCipheriv('aes-256-gcm', derive(seed, info), nonce, { authTagLength: TAG });
  c.setAAD(context);
  return Buffer.concat([info, nonce, c.update(plain), c.final(), c.getAuthTag()]);
}

export function openWithSeed(seed: Buffer, sealed: Buffer, context: Buffer): Buffer {
  if (sealed.length < INFO + NONCE + TAG) throw new TransformError('the stored data was shorter than the required size');
  try {
    const d = createDecipheriv('aes-256-gcm', derive(seed, sealed.subarray(0, INFO)), sealed.subarray(INFO, INFO + NONCE), { authTagLength: TAG });
    d.setAAD(context);
    d.setAuthTag(sealed.subarray(sealed.length - TAG));
    return Buffer.concat([d.update(sealed.subarray(INFO + NONCE, sealed.length - TAG)), d.final()]);
  } catch (err) {
    throw new TransformError('cipher: message authentication failed', { cause: err });
  }
}

const derive = (seed: Buffer, info: Buffer): Buffer => Buffer.from(hkdfSync('sha256', seed, Buffer.alloc(0), info, 32));
