/** The local KMS v2 plugin (local-kms-plugin.ts) as a child process, for kms providers in a benchmark. */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Child } from '../child.js';

export class KmsPlugin {
  private constructor(
    readonly child: Child,
    /** The `endpoint` of an EncryptionConfiguration kms provider that reaches it. */
    readonly endpoint: string,
  ) {}

  get pid(): number {
    return this.child.pid;
  }

  /** Serves on socket until stop(); script: the compiled plugin beside this file unless given. */
  static async start(socket: string, script: string = fileURLToPath(new URL('./local-kms-plugin.js', import.meta.url))): Promise<KmsPlugin> {
    if (!existsSync(script)) throw new Error(`${script} is missing: run npm run build first`);
    const child = Child.start('kms-plugin', process.execPath, [script, '--socket', socket]);
    await child.waitForLine((l) => l.includes('serving KMS v2 at'), 15_000);
    return new KmsPlugin(child, `unix://${socket}`);
  }

  async stop(): Promise<void> {
    await this.child.stop('SIGTERM', 5_000);
  }
}
