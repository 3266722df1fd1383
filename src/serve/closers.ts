import type { Logger } from '../observability/logger.js';

/**
 * Everything serve() started, closed in reverse order: what was built last (controllers, the
 * compactor) stops first, the log late, tracing last. A start that fails half-way closes what it
 * had opened with the same stack, so a caller may try again (the log's lock is released).
 */
export class Closers {
  private readonly stack: { name: string; close: () => unknown }[] = [];

  push(name: string, close: () => unknown): void {
    this.stack.push({ name, close });
  }

  /**
   * Closes each in turn, newest first. A closer that fails is logged and does not stop the rest (the
   * log must still close); the first failure is thrown once all have run.
   */
  async close(logger: Logger): Promise<void> {
    let failure: { err: unknown } | undefined;
    for (let c = this.stack.pop(); c; c = this.stack.pop()) {
      try {
        await c.close();
      } catch (err) {
        logger.warn(`closing ${c.name} failed`, { error: err instanceof Error ? err.message : String(err) });
        failure ??= { err };
      }
    }
    if (failure) throw failure.err;
  }
}
