import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { prefixOf, TransformError, type Transformer } from './transformer.js';

const BLOCK = 16;

/**
 * AES-CBC with a random IV per write and PKCS#7 padding, stored as prefix | iv | ciphertext, as
 * kube-apiserver's aescbc provider does. CBC authenticates nothing: a tampered value either fails its
 * padding check or opens to garbage, which the decoding of the object then refuses.
 */
export function aescbc(name: string, secret: Buffer): Transformer {
  if (![16, 24, 32].includes(secret.length)) throw new RangeError(`aescbc key ${name}: expected 16, 24 or 32 bytes, got ${secret.length}`);
  const algorithm = `aes-${secret.length * 8}-cbc` as const;
  const prefix = prefixOf('aescbc', name);
  return {
    prefix,
    seal(plain) {
      const iv = randomBytes(BLOCK);
      const c = createCipheriv(algorithm, secret, iv);
      return Buffer.concat([prefix, iv, c.update(plain), c.final()]);
    },
    open(sealed) {
      const body = sealed.subarray(prefix.length);
      if (body.length < 2 * BLOCK) throw new TransformError('the stored data was shorter than the required size');
      if (body.length % BLOCK !== 0) throw new TransformError('the stored data is not a multiple of the block size');
      try {
        const d = createDecipheriv(algorithm, secret, body.subarray(0, BLOCK));
        return Buffer.concat([d.update(body.subarray(BLOCK)), d.final()]);
      } catch (err) {
        throw new TransformError('invalid PKCS7 data (empty or not padded)', { cause: err });
      }
    },
  };
}
