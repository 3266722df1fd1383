/** Waiting for a line of a child process's output (test/server/child.ts), the way a person reads what a command says. */
import type { Child } from '../server/child.js';
import { sleep } from './poll.js';

/** The first match of pattern in the child's stdout (or stderr), once written; fails after ms, with what was written. */
export async function outputLine(child: Child, pattern: RegExp, opts: { ms?: number; stream?: 'stdout' | 'stderr' } = {}): Promise<RegExpMatchArray> {
  const { ms = 60_000, stream = 'stdout' } = opts;
  const deadline = Date.now() + ms;
  for (;;) {
    const m = pattern.exec(child.output[stream]);
    if (m) return m;
    if (Date.now() > deadline) throw new Error(`no line ${pattern} on ${stream} in ${ms} ms:\n${child.output.stdout}\n${child.output.stderr}`);
    await sleep(50);
  }
}
