import { randomBytes } from 'node:crypto';
import nacl from 'tweetnacl';
import { prefixOf, TransformError, type Transformer } from './transformer.js';

const NONCE = nacl.secretbox.nonceLength;

/** XSalsa20-Poly1305 (NaCl secretbox) with a random 24-byte nonce per write: prefix | nonce | box. */
export function secretbox(name: string, secret: Buffer): Transformer {
  if (secret.length !== nacl.secretbox.keyLength) throw new RangeError(`secretbox key ${name}: expected 32 bytes, got ${secret.length}`);
  const key = new Uint8Array(secret);
  const prefix = prefixOf('secretbox', name);
  return {
    prefix,
    seal(plain) {
      const nonce = randomBytes(NONCE);
      return Buffer.concat([prefix, nonce, nacl.secretbox(plain, nonce, key)]);
    },
    open(sealed) {
      const body = sealed.subarray(prefix.length);
      if (body.length < NONCE + nacl.secretbox.overheadLength) throw new TransformError('the stored data was shorter than the required size');
      const plain = nacl.secretbox.open(body.subarray(NONCE), body.subarray(0, NONCE), key);
      if (!plain) throw new TransformError('output array was not large enough for encryption');
      return Buffer.from(plain.buffer, plain.byteOffset, plain.byteLength);
    },
  };
}
