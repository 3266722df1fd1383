#!/usr/bin/env node
import { runOrchd } from './cli/orchd.js';

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
