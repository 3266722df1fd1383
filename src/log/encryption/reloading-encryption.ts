/**
 * The EncryptionConfiguration file reloaded while the server runs, as kube-apiserver does with
 * `--encryption-provider-config-automatic-reload`: the file is read every interval (a minute by
 * default); when its text changed, the new configuration is validated and its providers built, its
 * KMS plugins must answer healthy within a bound, and only then do they replace the running ones
 * (EncryptedLog.useProviders). A file that breaks a rule, names a provider orchd cannot serve, or
 * whose plugins do not answer leaves the last good configuration serving. Either outcome is logged
 * and counted (apiserver_encryption_config_controller_automatic_reloads_total).
 */
import type { EncryptionConfiguration } from '../../config/encryption.js';
import { ConfigReloader, type ParseConfig, type ReloadResult } from '../../config/reloader.js';
import type { EncryptedLog } from './encrypted-log.js';
import { ResourceProviders, type ProviderOptions } from './providers.js';

/** The least time new KMS plugins get to answer healthy (kube-apiserver's minimum grace period). */
const MIN_HEALTH_WAIT_MS = 10_000;

export type ReloadStatus = 'success' | 'failure';

export interface EncryptionReloadOptions {
  file: string;
  /** The text the running configuration was read from. */
  text: string;
  parse: ParseConfig<EncryptionConfiguration>;
  providers?: ProviderOptions;
  intervalMs?: number;
  /** Overrides how long new KMS plugins get to answer healthy: by default twice their timeouts, at least 10 s. */
  healthWaitMs?: number;
  onReloaded?: () => void;
  onFailed?: (problems: string[]) => void;
  /** Each reload that replaced the providers or failed, when it happened (ms). */
  onOutcome?: (status: ReloadStatus, atMs: number) => void;
}

/** The file's reload cycle (config/reloader.ts) with providers as the object built and swapped in. */
export class EncryptionReloader {
  private readonly reloader: ConfigReloader<EncryptionConfiguration, ResourceProviders>;
  /** How long the providers being built get to answer healthy, and the old ones are kept for reads. */
  private graceMs = MIN_HEALTH_WAIT_MS;

  constructor(log: EncryptedLog, o: EncryptionReloadOptions) {
    this.reloader = new ConfigReloader(log.providers, {
      file: o.file,
      text: o.text,
      parse: o.parse,
      ...(o.intervalMs !== undefined ? { intervalMs: o.intervalMs } : {}),
      build: (config) => {
        const timeouts = config.resources.flatMap((r) => r.providers).reduce((sum, p) => sum + (p.type === 'kms' ? p.timeoutMs : 0), 0);
        this.graceMs = Math.max(MIN_HEALTH_WAIT_MS, 2 * timeouts);
        return new ResourceProviders(config, o.providers);
      },
      // The plugins may come up later: a configuration whose plugins do not answer is tried again.
      notReady: async (next) => {
        next.start();
        if (await next.ready(o.healthWaitMs ?? this.graceMs)) return [];
        return next.health().map((h) => `health check for new transformers failed: ${h.problem}`);
      },
      dispose: (p) => p.close(),
      swap: (next) => log.useProviders(next, this.graceMs),
      ...(o.onReloaded ? { onReloaded: o.onReloaded } : {}),
      ...(o.onFailed ? { onFailed: o.onFailed } : {}),
      ...(o.onOutcome ? { onOutcome: o.onOutcome } : {}),
    });
  }

  start(): void {
    this.reloader.start();
  }

  close(): void {
    this.reloader.close();
  }

  /** Reads the file now; one check at a time. */
  check(): Promise<ReloadResult> {
    return this.reloader.check();
  }
}
