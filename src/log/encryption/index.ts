/**
 * Encryption at rest (EncryptionConfiguration): `encryptAtRest(log, config)` gives the log the
 * server uses. Without a configuration nothing is encrypted, but values that are (from an earlier
 * configuration) are still recognised and reported as corrupt objects instead of reaching the view.
 */
import type { EncryptionConfiguration } from '../../config/encryption.js';
import type { Log } from '../log.js';
import { EncryptedLog } from './encrypted-log.js';
import { ResourceProviders } from './providers.js';
import { StoredValues } from './stored-values.js';

export { EncryptedLog, corruptObjectsOf } from './encrypted-log.js';
export { CorruptObjects, type CorruptObject } from './corrupt-objects.js';
export { UnsupportedEncryptionError } from './providers.js';

/** Throws UnsupportedEncryptionError for a configuration orchd cannot serve (kms). */
export function encryptAtRest(inner: Log, config: EncryptionConfiguration = { resources: [] }): EncryptedLog {
  return new EncryptedLog(inner, new StoredValues(new ResourceProviders(config)));
}
