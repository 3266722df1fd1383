/**
 * Polling with a deadline, for what the code offers no event for (a controller acts after the commit
 * that triggers it; a child process is ready when its port answers): the check runs every stepMs
 * until it gives a truthy value, which is returned; past the deadline the wait fails, naming what it
 * waited for.
 */
export interface PollOptions {
  /** How long to wait at most; 10 s by default. */
  timeoutMs?: number;
  /** How long between two checks; 20 ms by default. */
  stepMs?: number;
  /** What is waited for, for the error at the deadline (a function: read then, e.g. the last answer seen). */
  what?: string | (() => string);
}

export async function eventually<T>(check: () => T | Promise<T>, opts: PollOptions = {}): Promise<NonNullable<T>> {
  const { timeoutMs = 10_000, stepMs = 20, what = 'the condition' } = opts;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`${typeof what === 'function' ? what() : what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/**
 * A pause, for the few waits that are not for a condition: to show that something does not happen
 * within a while, or to pace a load. A wait for something to happen is `eventually`.
 */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
