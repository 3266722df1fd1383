/**
 * What encryption at rest is given: which stored resources go through which transformers. The log
 * declares it in its own terms and never reads configuration files; src/config validates the
 * EncryptionConfiguration file into a value of this shape.
 */
export interface GroupResource {
  /** '' is the core group; '*' any group. */
  group: string;
  /** '*' any resource of the group. */
  resource: string;
}
export interface Key {
  name: string;
  secret: Buffer;
}
export type Provider =
  { type: 'aesgcm' | 'aescbc' | 'secretbox'; keys: Key[] } | { type: 'identity' } | { type: 'kms'; name: string; apiVersion: 'v1' | 'v2'; endpoint: string; timeoutMs: number; cachesize?: number };
export interface ResourceConfiguration {
  resources: GroupResource[];
  /** The first encrypts writes; all of them are tried on reads (by the stored prefix). */
  providers: Provider[];
}
export interface EncryptionConfiguration {
  resources: ResourceConfiguration[];
}
