import { afterAll, beforeAll } from 'vitest';
import { silentLogger } from '../../src/observability/logger.js';
import { serve, type Running, type ServeOptions } from '../../src/serve.js';
import { removeDir, tempDir } from './temp.js';

export interface TestServer extends Running {
  dataDir: string;
  /** Stops the server and removes its data folder. */
  stop(): Promise<void>;
}

/**
 * A real orchd on 127.0.0.1 with a real LevelDB in a fresh temp folder (or the one given, kept at stop).
 * Any serve() option may be given; the ones every suite would repeat have defaults here. The policy status controller
 * is off unless asked for: it writes each new policy's status right after the policy, so the many
 * suites that use a ValidatingAdmissionPolicy as their kind-with-status fixture and replace it with
 * the resourceVersion their create answered would meet a 409, as they would on Kubernetes.
 */
export async function startServer(opts: Partial<ServeOptions> = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? tempDir('orchd-test-', { until: 'file' });
  const running = await serve({
    port: 0,
    host: '127.0.0.1',
    eventTtlSeconds: 3600,
    logger: silentLogger,
    policyStatus: false,
    ...opts,
    dataDir,
  });
  return {
    ...running,
    dataDir,
    async stop() {
      await running.close();
      if (!opts.dataDir) removeDir(dataDir);
    },
  };
}

/**
 * One real server for a whole test file: started before its tests, stopped after them.
 *
 *   const file = serverForFile();
 *   it('…', async () => { await call(file.base, 'GET', '/version'); });
 */
export function serverForFile(opts: Parameters<typeof startServer>[0] = {}): { readonly server: TestServer; readonly base: string } {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startServer(opts);
  });
  afterAll(async () => {
    await server?.stop();
  });
  return {
    get server() {
      if (!server) throw new Error('the server starts in beforeAll');
      return server;
    },
    get base() {
      return this.server.url;
    },
  };
}

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** fetch with a JSON body in and the parsed JSON (or text) out. */
export async function call<T = any>(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['Content-Type'] ??= 'application/json';
  }
  const res = await fetch(base + path, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: tests look at text
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}
