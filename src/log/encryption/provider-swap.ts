/**
 * How new encryption providers take over from the running ones, as kube-apiserver's
 * `--encryption-provider-config-automatic-reload` does it: the providers are built from the new
 * configuration, its KMS plugins must answer healthy within a bound, and only then do they replace
 * the running ones (EncryptedLog.useProviders); the old ones are kept a while for reads. Reading the
 * file every interval, keeping the last good one and logging the outcome are the configuration
 * reloader's job (src/config/reloader.ts), which serve.ts gives these hooks to.
 */
import type { EncryptionConfiguration } from './configuration.js';
import type { EncryptedLog } from './encrypted-log.js';
import { ResourceProviders, type ProviderOptions } from './providers.js';

/** The least time new KMS plugins get to answer healthy (kube-apiserver's minimum grace period). */
const MIN_HEALTH_WAIT_MS = 10_000;

export type ReloadStatus = 'success' | 'failure';

export interface ProviderSwapOptions {
  providers?: ProviderOptions;
  /** Overrides how long new KMS plugins get to answer healthy: by default twice their timeouts, at least 10 s. */
  healthWaitMs?: number;
}

/** The hooks a configuration reloader builds, checks, disposes of and swaps in providers with. */
export interface ProviderSwap {
  build(config: EncryptionConfiguration): ResourceProviders;
  notReady(next: ResourceProviders): Promise<string[]>;
  dispose(p: ResourceProviders): void;
  swap(next: ResourceProviders): void;
}

export function providerSwap(log: EncryptedLog, o: ProviderSwapOptions = {}): ProviderSwap {
  /** How long the providers being built get to answer healthy, and the old ones are kept for reads. */
  let graceMs = MIN_HEALTH_WAIT_MS;
  return {
    build: (config) => {
      const timeouts = config.resources.flatMap((r) => r.providers).reduce((sum, p) => sum + (p.type === 'kms' ? p.timeoutMs : 0), 0);
      graceMs = Math.max(MIN_HEALTH_WAIT_MS, 2 * timeouts);
      return new ResourceProviders(config, o.providers);
    },
    // The plugins may come up later: a configuration whose plugins do not answer is tried again.
    notReady: async (next) => {
      next.start();
      if (await next.ready(o.healthWaitMs ?? graceMs)) return [];
      return next.health().map((h) => `health check for new transformers failed: ${h.problem}`);
    },
    dispose: (p) => p.close(),
    swap: (next) => log.useProviders(next, graceMs),
  };
}
