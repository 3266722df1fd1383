import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { removeDir, tempDir } from './temp.js';

/** Debian's prometheus (installed by .ci/run). */
export const PROMETHEUS_BINARY = process.env.ORCHD_TEST_PROMETHEUS ?? '/usr/bin/prometheus';

/** One sample of an instant query: its labels and value. */
export interface PromSample {
  metric: Record<string, string>;
  value: number;
}

/**
 * A real Prometheus on loopback scraping one target every scrapeSeconds, with a temp TSDB folder,
 * stopped by its PID. Queries go to its HTTP API.
 */
export class TestPrometheus {
  private readonly output: string[] = [];

  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    readonly url: string,
  ) {}

  static async start(target: string, scrapeSeconds = 1): Promise<TestPrometheus> {
    const dir = tempDir('orchd-test-prometheus-', { until: 'file' });
    const port = await freePort();
    const config = join(dir, 'prometheus.yml');
    // JSON is YAML: the scrape of one orchd, as an operator would point Prometheus at it.
    await writeFile(
      config,
      JSON.stringify({ global: { scrape_interval: `${scrapeSeconds}s`, evaluation_interval: `${scrapeSeconds}s` }, scrape_configs: [{ job_name: 'orchd', static_configs: [{ targets: [target] }] }] }),
    );
    const child = spawn(PROMETHEUS_BINARY, ['--config.file', config, '--storage.tsdb.path', join(dir, 'data'), '--web.listen-address', `127.0.0.1:${port}`, '--log.level', 'warn'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const p = new TestPrometheus(child, dir, `http://127.0.0.1:${port}`);
    for (const s of [child.stdout, child.stderr]) s?.on('data', (b: Buffer) => p.output.push(b.toString()));
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ready = await fetch(`${p.url}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) return p;
      if (child.exitCode !== null || Date.now() > deadline) {
        await p.stop();
        throw new Error(`prometheus did not start:\n${p.output.join('').slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** An instant query at `time` (s since the epoch; default now). */
  async query(promql: string, time?: number): Promise<PromSample[]> {
    const params = new URLSearchParams({ query: promql, ...(time !== undefined ? { time: String(time) } : {}) });
    const res = await fetch(`${this.url}/api/v1/query?${params}`);
    const body = (await res.json()) as { status: string; error?: string; data: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] } };
    if (body.status !== 'success') throw new Error(`${promql}: ${body.error}`);
    return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  }

  /** The health of the scrape of the one target: up, and the error of the last scrape. */
  async target(): Promise<{ health: string; lastError: string; lastScrape: string }> {
    const body = (await (await fetch(`${this.url}/api/v1/targets`)).json()) as { data: { activeTargets: { health: string; lastError: string; lastScrape: string }[] } };
    return body.data.activeTargets[0];
  }

  /** Resolves once a scrape has started after `afterMs` (Date.now()) and finished: what was true then is in the TSDB. */
  async scrapedAfter(afterMs: number, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const t = await this.target();
      if (t && Date.parse(t.lastScrape) > afterMs) {
        if (t.health !== 'up') throw new Error(`the scrape failed: ${t.lastError}`);
        return;
      }
      if (Date.now() > deadline) throw new Error(`no scrape after ${new Date(afterMs).toISOString()} within ${timeoutMs} ms (last: ${t?.lastScrape})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    const { child } = this;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      process.kill(child.pid!, 'SIGTERM');
      const timer = setTimeout(() => child.pid && process.kill(child.pid, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    removeDir(this.dir);
  }
}
