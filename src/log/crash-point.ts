/**
 * Named places where a test can have the process killed (SIGKILL) to prove that recovery holds
 * whatever the moment (style.md section 9). `ORCHD_CRASH_POINT=<name>` kills at the first pass of
 * the point, `<name>:<n>` at the n-th. The variable is read once, at load: when it is unset,
 * crashPoint is an empty function that costs nothing on the write path.
 *
 * SIGKILL loses what the process holds, not what the kernel holds: it proves atomicity and ordering,
 * not that fsync reached the platter.
 */
export const CRASH_POINTS = ['before-batch-write', 'after-batch-write-before-ack', 'compact-after-horizon', 'checkpoint-before-rename', 'checkpoint-between-renames'] as const;
export type CrashPointName = (typeof CRASH_POINTS)[number];

function armed(spec: string | undefined): ((name: CrashPointName) => void) | undefined {
  if (!spec) return undefined;
  const [name, nth = '1'] = spec.split(':');
  const count = Number(nth);
  // A misspelt point would never fire and a crash test would pass without crashing.
  if (!(CRASH_POINTS as readonly string[]).includes(name) || !Number.isSafeInteger(count) || count < 1) {
    throw new Error(`ORCHD_CRASH_POINT=${spec}: expected one of ${CRASH_POINTS.join(', ')}, optionally :<n> with n >= 1`);
  }
  let left = count;
  return (point) => {
    if (point === name && --left === 0) process.kill(process.pid, 'SIGKILL');
  };
}

export const crashPoint: (name: CrashPointName) => void = armed(process.env.ORCHD_CRASH_POINT) ?? (() => {});
