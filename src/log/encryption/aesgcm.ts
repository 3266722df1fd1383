import { createCipheriv, createDecipheriv, randomBytes, type CipherGCMTypes } from 'node:crypto';
import { prefixOf, TransformError, type Transformer } from './transformer.js';

const NONCE = 12;
const TAG = 16;

/**
 * AES-GCM with a random 96-bit nonce per write, stored as prefix | nonce | ciphertext | tag. The
 * storage key is the additional authenticated data, so a value copied under another key does not
 * open (kube-apiserver binds its values to the etcd key the same way).
 */
export function aesgcm(name: string, secret: Buffer): Transformer {
  if (![16, 24, 32].includes(secret.length)) throw new RangeError(`aesgcm key ${name}: expected 16, 24 or 32 bytes, got ${secret.length}`);
  const algorithm: CipherGCMTypes = secret.length === 16 ? 'aes-128-gcm' : secret.length === 24 ? 'aes-192-gcm' : 'aes-256-gcm';
  const prefix = prefixOf('aesgcm', name);
  return {
    prefix,
    seal(plain, context) {
      const nonce = randomBytes(NONCE);
      const c = createCipheriv(algorithm, secret, nonce, { authTagLength: TAG });
      c.setAAD(context);
      return Buffer.concat([prefix, nonce, c.update(plain), c.final(), c.getAuthTag()]);
    },
    open(sealed, context) {
      const body = sealed.subarray(prefix.length);
      if (body.length < NONCE + TAG) throw new TransformError('the stored data was shorter than the required size');
      try {
        const d = createDecipheriv(algorithm, secret, body.subarray(0, NONCE), { authTagLength: TAG });
        d.setAAD(context);
        d.setAuthTag(body.subarray(body.length - TAG));
        return Buffer.concat([d.update(body.subarray(NONCE, body.length - TAG)), d.final()]);
      } catch (err) {
        throw new TransformError('cipher: message authentication failed', { cause: err });
      }
    },
  };
}
