/**
 * What an encryption-at-rest provider does to one stored value: plain bytes in, bytes for the disk
 * out, and back. The bytes on disk start with the transformer's prefix, which names the provider
 * and the key (`orch:enc:aesgcm:v1:<key name>:`) or the KMS plugin (`orch:enc:kms:v2:<plugin name>:`),
 * so a reader finds the transformer that wrote them
 * whatever the current first provider is: keys rotate by adding a new first key and rewriting.
 */
export interface Transformer {
  /** `orch:enc:<provider>:v1:<key name>:`, `orch:enc:kms:v2:<plugin name>:` (kube-apiserver writes `k8s:enc:…`). */
  readonly prefix: Buffer;
  /** The sealed value, prefix included. context is authenticated where the cipher allows it (AES-GCM). */
  seal(plain: Buffer, context: Buffer): Buffer;
  /** The plain value of sealed (which starts with prefix). Throws TransformError when it cannot. */
  open(sealed: Buffer, context: Buffer): Buffer;
  /**
   * Asynchronous work open() needs done first (kms: the plugin opens the value's data key). The log
   * awaits it over a page of values, then opens them synchronously. Never rejects: what failed is
   * reported by open().
   */
  prepare?(sealed: Buffer): Promise<void>;
}

/** The prefix every encrypted value starts with. */
export const ENCRYPTED_PREFIX = 'orch:enc:';

/** `orch:enc:<provider>:<version>:<key or plugin name>:`; only kms has a v2. */
export const prefixOf = (provider: string, keyName: string, version = 'v1'): Buffer => Buffer.from(`${ENCRYPTED_PREFIX}${provider}:${version}:${keyName}:`, 'utf8');

/** A stored value that cannot be turned back into plain bytes: wrong key, tampered or cut short. */
export class TransformError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TransformError';
  }
}
