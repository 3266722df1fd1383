/**
 * A configuration file that kube-apiserver re-reads while running (`--authentication-config`,
 * `--authorization-config`, `--encryption-provider-config` with automatic reload): every interval (a minute by default) the file is read; when its text
 * changed, it is parsed and validated, the runtime object is built from it (expressions compiled,
 * connection files read) and, when `ready` says so, swapped in. A file that breaks a rule or an
 * object that cannot be built leaves the last good one serving; each outcome is logged by the
 * caller (onReloaded/onFailed) and counted (onOutcome, and the gauges under metricPrefix).
 */
import { readFile } from 'node:fs/promises';
import type { DocumentKind } from './document.js';
import { loadDocumentText, problemLine } from './load.js';
import type { Sample } from '../observability/samples.js';

export const RELOAD_INTERVAL_MS = 60_000;

export type ParseConfig<C> = (text: string) => { ok: true; value: C } | { ok: false; problems: string[] };

/** What a reloader needs of a file loaded at start: its path, the text it was read from, how a new text is read. */
export async function reloadableFile<C>(file: string, kind: DocumentKind<C>): Promise<{ file: string; text: string; parse: ParseConfig<C> }> {
  return {
    file,
    text: await readFile(file, 'utf8').catch(() => ''),
    parse: (text) => {
      const r = loadDocumentText(file, text, kind);
      return r.ok ? { ok: true, value: r.document.value } : { ok: false, problems: r.problems.map(problemLine) };
    },
  };
}

export interface ConfigReloaderOptions<C, B> {
  file: string;
  /** The text the running object was built from. */
  text: string;
  parse: ParseConfig<C>;
  /** Throws (one problem a line) when the object cannot be built. */
  build: (config: C) => B;
  /**
   * Why a built object cannot serve yet (an issuer not reachable); such a failure may pass by
   * itself, so the same text is tried again at the next check. Empty: ready.
   */
  notReady?: (next: B) => Promise<string[]>;
  /** Releases an object that is replaced or not used. */
  dispose?: (b: B) => void;
  /**
   * How a new object takes over from the previous one; by default the previous one is disposed.
   * With it, the objects swapped in belong to whoever swap gives them to (close() leaves them).
   */
  swap?: (next: B, previous: B) => void;
  /** Gauge names start with it: `orchd_authorization_config`; without it there are none. */
  metricPrefix?: string;
  intervalMs?: number;
  onReloaded?: () => void;
  onFailed?: (problems: string[]) => void;
  /** Each reload that swapped or failed, and when (ms). */
  onOutcome?: (status: 'success' | 'failure', atMs: number) => void;
}

export type ReloadResult = 'unchanged' | 'reloaded' | 'failed';

export class ConfigReloader<C, B> {
  private text: string;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<ReloadResult> | undefined;
  private succeeded = 0;
  private failed = 0;
  private lastOutcome: 'success' | 'failure' | undefined;
  private lastAt = 0;

  constructor(
    private currentValue: B,
    private readonly o: ConfigReloaderOptions<C, B>,
  ) {
    this.text = o.text;
  }

  /** The object serving now; read it on every use, it changes on reload. */
  get current(): B {
    return this.currentValue;
  }

  start(): void {
    this.timer = setInterval(() => void this.check(), this.o.intervalMs ?? RELOAD_INTERVAL_MS);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
    if (!this.o.swap) this.o.dispose?.(this.currentValue);
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
    let next: B;
    try {
      next = this.o.build(parsed.value);
    } catch (err) {
      return this.fail((err as Error).message.split('\n'), text);
    }
    const waiting = (await this.o.notReady?.(next)) ?? [];
    if (waiting.length > 0) {
      this.o.dispose?.(next);
      return this.fail(waiting, undefined);
    }
    const previous = this.currentValue;
    this.currentValue = next;
    if (this.o.swap) this.o.swap(next, previous);
    else this.o.dispose?.(previous);
    this.text = text;
    this.succeeded++;
    this.lastOutcome = 'success';
    this.lastAt = Date.now();
    this.o.onOutcome?.('success', this.lastAt);
    this.o.onReloaded?.();
    return 'reloaded';
  }

  /**
   * A failed text is remembered, so it is not retried until it changes (one log line per bad
   * edit); a failure that may pass by itself (`failedText` undefined) is retried at the next check.
   */
  private fail(problems: string[], failedText: string | undefined): ReloadResult {
    if (failedText !== undefined) this.text = failedText;
    this.failed++;
    this.lastOutcome = 'failure';
    this.lastAt = Date.now();
    this.o.onOutcome?.('failure', this.lastAt);
    this.o.onFailed?.(problems);
    return 'failed';
  }

  /** The reloads so far and the last one's outcome, for /metrics under metricPrefix. */
  samples(): Sample[] {
    const p = this.o.metricPrefix;
    if (p === undefined) return [];
    return [
      { name: `${p}_reloads_succeeded`, help: 'Reloads of the configuration file that took effect.', type: 'counter', value: this.succeeded },
      { name: `${p}_reloads_failed`, help: 'Reloads of the configuration file refused (the last good configuration still serves).', type: 'counter', value: this.failed },
      { name: `${p}_last_reload_success`, help: 'Whether the last reload took effect (1) or was refused (0).', type: 'gauge', value: this.lastOutcome === 'failure' ? 0 : 1 },
      { name: `${p}_last_reload_timestamp_seconds`, help: 'When the configuration file was last reloaded.', type: 'gauge', value: Math.floor(this.lastAt / 1000) },
    ];
  }
}
