/** Turns (src/store/turns.ts): the catch-up watch pages' queue — one piece at a time, with the event loop's I/O between pieces. */
import { defer, Observable, Subject, throwError, timer, map, lastValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Turns } from '../../src/store/turns.js';
import { sleep } from '../helpers/poll.js';

const tick = () => sleep(5);

describe('Turns', () => {
  it('runs one piece at a time, in the order they asked, each to its end', async () => {
    const turns = new Turns();
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const piece = (i: number) =>
      turns.take(
        defer(() => {
          running++;
          most = Math.max(most, running);
          return timer(2).pipe(
            map(() => {
              running--;
              order.push(i);
              return i;
            }),
          );
        }),
      );
    const got = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => lastValueFrom(piece(i))));
    expect(got).toEqual([0, 1, 2, 3, 4, 5]);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    expect(most).toBe(1);
  });

  it('lets a timer that fell due during a piece run before the next piece starts', async () => {
    const turns = new Turns();
    const order: string[] = [];
    const first = turns.take(
      defer(() => {
        setTimeout(() => order.push('timer'), 0);
        const until = Date.now() + 3;
        while (Date.now() < until); // a page's synchronous work
        order.push('first');
        return [1];
      }),
    );
    const second = turns.take(defer(() => (order.push('second'), [2])));
    await Promise.all([lastValueFrom(first), lastValueFrom(second)]);
    expect(order).toEqual(['first', 'timer', 'second']);
  });

  it('passes the turn on when a piece errs or is unsubscribed, and drops a piece unsubscribed while waiting', async () => {
    const turns = new Turns();
    const failed = lastValueFrom(turns.take(throwError(() => new Error('page failed')))).catch((e: Error) => e.message);
    const hanging = new Subject<number>();
    const cut = turns.take(hanging).subscribe();
    const dropped: string[] = [];
    const waiting = turns.take(new Observable<number>(() => void dropped.push('ran'))).subscribe();
    const last = lastValueFrom(turns.take(defer(() => [7])));
    expect(await failed).toBe('page failed');
    await tick();
    expect(turns.waiting).toBe(2);
    waiting.unsubscribe();
    expect(turns.waiting).toBe(1);
    cut.unsubscribe();
    expect(await last).toBe(7);
    expect(dropped).toEqual([]);
    expect(hanging.observed).toBe(false);
  });
});

describe('Turns, paced', () => {
  it('leaves the loop to other work for as long as the last piece took before the next starts', async () => {
    const turns = new Turns();
    const at: number[] = [];
    const busy = (ms: number) =>
      turns.take(
        defer(() => {
          const start = performance.now();
          at.push(start);
          while (performance.now() - start < ms); // a page's synchronous work
          return [ms];
        }),
      );
    await Promise.all([busy(30), busy(0)].map((p) => lastValueFrom(p)));
    // The second waited out the first's 30 ms after its own 30 (back to back it starts at 30).
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(59);
  });
});
