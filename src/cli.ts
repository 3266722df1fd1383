#!/usr/bin/env node
import { runOrchd } from './cli/orchd.js';

// A reader that stopped reading (`orchd log | head`) is the end of the command, not a fault: quietly
// and with status 0, as git log does.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.exit(0);
});

runOrchd(process.argv.slice(2), { out: process.stdout, err: process.stderr }).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // Not a mistake in the command line (those are said by runCommand): what failed, in one line.
    process.stderr.write(`orchd: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
