/**
 * The EncryptionConfiguration file reloaded while the server runs, as kube-apiserver does with
 * `--encryption-provider-config-automatic-reload`: the file is read every interval (a minute by
 * default); when its text changed, the new configuration is validated and its providers built, its
 * KMS plugins must answer healthy within a bound, and only then do they replace the running ones
 * (EncryptedLog.useProviders). A file that breaks a rule, names a provider orchd cannot serve, or
 * whose plugins do not answer leaves the last good configuration serving. Either outcome is logged
 * and counted (apiserver_encryption_config_controller_automatic_reloads_total).
 */
import { readFile } from 'node:fs/promises';
import type { EncryptionConfiguration } from '../../config/encryption.js';
import type { EncryptedLog } from './encrypted-log.js';
import { ResourceProviders, type ProviderOptions } from './providers.js';

/** kube-apiserver polls the file once a minute. */
export const ENCRYPTION_RELOAD_INTERVAL_MS = 60_000;
/** The least time new KMS plugins get to answer healthy (kube-apiserver's minimum grace period). */
const MIN_HEALTH_WAIT_MS = 10_000;

export type ParseEncryption = (text: string) => { ok: true; value: EncryptionConfiguration } | { ok: false; problems: string[] };
export type ReloadStatus = 'success' | 'failure';

export interface EncryptionReloadOptions {
  file: string;
  /** The text the running configuration was read from. */
  text: string;
  parse: ParseEncryption;
  providers?: ProviderOptions;
  intervalMs?: number;
  /** Overrides how long new KMS plugins get to answer healthy: by default twice their timeouts, at least 10 s. */
  healthWaitMs?: number;
  onReloaded?: () => void;
  onFailed?: (problems: string[]) => void;
  /** Each reload that replaced the providers or failed, when it happened (ms). */
  onOutcome?: (status: ReloadStatus, atMs: number) => void;
}

export type ReloadResult = 'unchanged' | 'reloaded' | 'failed';

export class EncryptionReloader {
  private text: string;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<ReloadResult> | undefined;

  constructor(
    private readonly log: EncryptedLog,
    private readonly o: EncryptionReloadOptions,
  ) {
    this.text = o.text;
  }

  start(): void {
    this.timer = setInterval(() => void this.check(), this.o.intervalMs ?? ENCRYPTION_RELOAD_INTERVAL_MS);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** Reads the file now; one check at a time. */
  check(): Promise<ReloadResult> {
    this.checking ??= this.reload().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async reload(): Promise<ReloadResult> {
    let text: string;
    try {
      text = await readFile(this.o.file, 'utf8');
    } catch (err) {
      return this.fail([`${this.o.file}: unable to read the file: ${(err as Error).message}`], undefined);
    }
    if (text === this.text) return 'unchanged';
    const parsed = this.o.parse(text);
    if (!parsed.ok) return this.fail(parsed.problems, text);
    let next: ResourceProviders;
    try {
      next = new ResourceProviders(parsed.value, this.o.providers);
    } catch (err) {
      return this.fail([(err as Error).message], text);
    }
    const timeouts = parsed.value.resources.flatMap((r) => r.providers).reduce((sum, p) => sum + (p.type === 'kms' ? p.timeoutMs : 0), 0);
    const graceMs = Math.max(MIN_HEALTH_WAIT_MS, 2 * timeouts);
    next.start();
    if (!(await next.ready(this.o.healthWaitMs ?? graceMs))) {
      const problems = next.health().map((h) => `health check for new transformers failed: ${h.problem}`);
      next.close();
      // The plugins may come up later: the same text is tried again at the next check.
      return this.fail(problems, undefined);
    }
    this.log.useProviders(next, graceMs);
    this.text = text;
    this.o.onOutcome?.('success', Date.now());
    this.o.onReloaded?.();
    return 'reloaded';
  }

  /** A text that is wrong is not retried until it changes (one log line per bad edit); text undefined: retried. */
  private fail(problems: string[], text: string | undefined): ReloadResult {
    if (text !== undefined) this.text = text;
    this.o.onOutcome?.('failure', Date.now());
    this.o.onFailed?.(problems);
    return 'failed';
  }
}
