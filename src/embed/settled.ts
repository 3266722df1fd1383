import { firstValueFrom, map, startWith, switchMap, throwError, timeout, timer } from 'rxjs';
import type { Running } from '../serve.js';

/**
 * Resolves with the applied version once quietMs have passed since the last commit; every commit
 * meanwhile starts the wait again.
 */
export function quietFor(store: Running['store'], lastCommit: { at: number }, quietMs: number, timeoutMs: number): Promise<string> {
  return firstValueFrom(
    store.changes$.pipe(
      startWith(undefined),
      switchMap(() => timer(Math.max(0, lastCommit.at + quietMs - Date.now()))),
      map(() => String(store.appliedSeq)),
      timeout({ first: timeoutMs, with: () => throwError(() => new Error(`writes did not pause for ${quietMs} ms within ${timeoutMs} ms (the server is at ${store.appliedSeq})`)) }),
    ),
  );
}
