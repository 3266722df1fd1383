/**
 * The authentication configuration file, reloaded while the server runs, as kube-apiserver reloads
 * `--authentication-config`: the file is read every interval (a minute by default); when its text
 * changed, the new configuration is validated, its authenticators built (expressions compiled) and
 * their issuers discovered, and only then swapped in. A file that breaks a rule, an expression that
 * does not compile or an issuer that cannot be reached leaves the last good configuration serving;
 * either outcome is logged and counted in the gauges.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import type { AuthenticationConfiguration } from '../config/authentication.js';
import { RequestAuthenticator, type AuthOutcome, type Authenticator } from './authenticate.js';

export const RELOAD_INTERVAL_MS = 60_000;

export type ParseAuthentication = (text: string) => { ok: true; value: AuthenticationConfiguration } | { ok: false; problems: string[] };

export interface ReloadOptions {
  file: string;
  /** The text the running configuration was read from. */
  text: string;
  parse: ParseAuthentication;
  build: (config: AuthenticationConfiguration) => RequestAuthenticator;
  intervalMs?: number;
  onReloaded?: () => void;
  onFailed?: (problems: string[]) => void;
}

export type ReloadResult = 'unchanged' | 'reloaded' | 'failed';

export class ReloadingAuthenticator implements Authenticator {
  private text: string;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<ReloadResult> | undefined;
  private succeeded = 0;
  private failed = 0;
  private lastOutcome: 'success' | 'failure' | undefined;
  private lastAt = 0;

  constructor(
    private current: RequestAuthenticator,
    private readonly o: ReloadOptions,
  ) {
    this.text = o.text;
  }

  authenticate(headers: IncomingHttpHeaders, path: string): Promise<AuthOutcome> {
    return this.current.authenticate(headers, path);
  }

  start(): void {
    this.current.start();
    this.timer = setInterval(() => void this.check(), this.o.intervalMs ?? RELOAD_INTERVAL_MS);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
    this.current.close();
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
    let next: RequestAuthenticator;
    try {
      next = this.o.build(parsed.value);
    } catch (err) {
      return this.fail((err as Error).message.split('\n'), text);
    }
    const unreachable = await next.notReady();
    if (unreachable.length > 0) {
      next.close();
      return this.fail(unreachable.map((issuer) => `issuer ${issuer}: discovery failed; keeping the previous configuration`), text);
    }
    const previous = this.current;
    this.current = next;
    previous.close();
    this.text = text;
    this.succeeded++;
    this.lastOutcome = 'success';
    this.lastAt = Date.now();
    this.o.onReloaded?.();
    return 'reloaded';
  }

  /**
   * A failed text is not retried until it changes (one log line per bad edit), except when the
   * failure may pass by itself (an unreachable issuer, an unreadable file): then the next check
   * tries again.
   */
  private fail(problems: string[], text: string | undefined): ReloadResult {
    const transient = text === undefined || problems.some((p) => p.includes('discovery failed'));
    if (!transient && text !== undefined) this.text = text;
    this.failed++;
    this.lastOutcome = 'failure';
    this.lastAt = Date.now();
    this.o.onFailed?.(problems);
    return 'failed';
  }

  gauges(): Record<string, number> {
    return {
      orchd_authentication_config_reloads_succeeded: this.succeeded,
      orchd_authentication_config_reloads_failed: this.failed,
      orchd_authentication_config_last_reload_success: this.lastOutcome === undefined ? 1 : this.lastOutcome === 'success' ? 1 : 0,
      orchd_authentication_config_last_reload_timestamp_seconds: Math.floor(this.lastAt / 1000),
    };
  }
}
