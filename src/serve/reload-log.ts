import type { Logger } from '../observability/logger.js';

/** How a configuration file's reload is told in the log: done, or refused with the last good one kept. */
export function reloadLog(logger: Logger, what: string, file: string): { onReloaded: () => void; onFailed: (problems: string[]) => void } {
  return {
    onReloaded: () => logger.info(`${what} configuration reloaded`, { file }),
    onFailed: (problems) => logger.error(`${what} configuration not reloaded: keeping the last good one`, { file, problems }),
  };
}
