#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { parseDuration } from './config/duration.js';
import { serve } from './serve.js';

const usage = `usage: orchd serve [--port 8080] [--bind-address 127.0.0.1] [--data-dir ./data] [--event-ttl 1h]

  --port           TCP port to listen on (0 picks a free one)          default 8080
  --bind-address   address to listen on                                 default 127.0.0.1
  --data-dir       folder of the LevelDB log                            default ./data
  --event-ttl      how long Events are kept after their last write      default 1h
`;

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command !== 'serve') {
    process.stderr.write(usage);
    process.exit(command === undefined || command === '--help' || command === 'help' ? 0 : 2);
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      port: { type: 'string', default: '8080' },
      'bind-address': { type: 'string', default: '127.0.0.1' },
      'data-dir': { type: 'string', default: './data' },
      'event-ttl': { type: 'string', default: '1h' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(usage);
    return;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: invalid port ${values.port}`);
  const server = await serve({
    port,
    host: values['bind-address'],
    dataDir: values['data-dir'],
    eventTtlSeconds: parseDuration(values['event-ttl']),
  });
  const stop = (signal: string) => {
    server.logger.info('shutting down', { signal });
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`orchd: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
