/** Starts and stops the bare node:http ceiling (bare-http-server.ts) as a child process. */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Child } from '../child.js';

export class BareHttp {
  private constructor(
    readonly child: Child,
    readonly url: string,
  ) {}

  get pid(): number {
    return this.child.pid;
  }

  /** script: the compiled server (the .js beside this module unless given); dataDir: where POST /durable keeps its LevelDB (none: no /durable). */
  static async start(script = fileURLToPath(new URL('./bare-http-server.js', import.meta.url)), dataDir?: string): Promise<BareHttp> {
    if (!existsSync(script)) throw new Error(`${script} is missing: run npm run build first`);
    const child = Child.start('bare-http', process.execPath, [script, ...(dataDir ? [dataDir] : [])]);
    const line = await child.waitForLine((l) => l.includes('"msg":"ready"'), 15_000);
    return new BareHttp(child, (JSON.parse(line) as { url: string }).url);
  }

  async stop(): Promise<void> {
    await this.child.stop('SIGTERM', 5_000);
  }
}
