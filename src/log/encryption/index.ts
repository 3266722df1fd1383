/**
 * Encryption at rest (EncryptionConfiguration): `encryptAtRest(log, config)` gives the log the
 * server uses. Without a configuration nothing is encrypted, but values that are (from an earlier
 * configuration) are still recognised and reported as corrupt objects instead of reaching the view.
 */
import type { EncryptionConfiguration } from './configuration.js';
import type { Log } from '../log.js';
import { EncryptedLog } from './encrypted-log.js';
import { ResourceProviders, type ProviderOptions } from './providers.js';
import { StoredValues } from './stored-values.js';

export { EncryptedLog, corruptObjectsOf } from './encrypted-log.js';
export { CorruptEntryError, type CorruptObject } from './corrupt-objects.js';
export { COMMAND_KMS_WAIT_MS, type ProviderOptions, type ResourceProviders } from './providers.js';
export type { KmsTimings } from './kms/kms-v2.js';
export { providerSwap, type ProviderSwap, type ReloadStatus } from './provider-swap.js';
export type { EncryptionConfiguration } from './configuration.js';

/**
 * Throws UnsupportedEncryptionError for a configuration orchd cannot serve (kms v1). With KMS
 * plugins, open() starts polling them and ready() says when values sealed by them can be read.
 */
export function encryptAtRest(inner: Log, config: EncryptionConfiguration = { resources: [] }, opts: ProviderOptions = {}): EncryptedLog {
  return new EncryptedLog(inner, new StoredValues(new ResourceProviders(config, opts)));
}
