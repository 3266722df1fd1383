/** Structured logs: one JSON object per line on stderr, so operators can grep and ship them. */
export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function jsonLogger(stream: NodeJS.WritableStream = process.stderr, minLevel: 'info' | 'warn' | 'error' = 'info'): Logger {
  const order = { info: 0, warn: 1, error: 2 } as const;
  const write = (level: keyof typeof order) => (msg: string, fields?: Record<string, unknown>) => {
    if (order[level] < order[minLevel]) return;
    stream.write(JSON.stringify({ ts: new Date().toISOString(), level, msg, ...fields }) + '\n');
  };
  return { info: write('info'), warn: write('warn'), error: write('error') };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
