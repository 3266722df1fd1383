import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { counted, progress } from '../../src/timetravel/print/progress.js';

/** A stream that says it is a terminal, as cli-progress draws on one, keeping what is written. */
function terminal(): Writable & { isTTY: boolean; text: string; columns: number } {
  const w = new Writable({
    write(chunk, _enc, cb) {
      w.text += String(chunk);
      cb();
    },
  }) as Writable & { isTTY: boolean; text: string; columns: number; cursorTo(): boolean; clearLine(): boolean; moveCursor(): boolean };
  w.isTTY = true;
  w.text = '';
  w.columns = 200;
  w.cursorTo = () => true;
  w.clearLine = () => true;
  w.moveCursor = () => true;
  return w;
}

/** The bar's clock, moved by the tests (a second of waiting each was most of this file's time). */
let ms = 0;
const now = () => ms;

describe('the progress bar of a time-travel command', () => {
  it('shows nothing for the first second, then what is done, its rate and the time left', async () => {
    const err = terminal();
    const bar = progress(1000, 'export', { stream: err, now });
    bar.update(10);
    expect(err.text).toBe('');
    ms += 1100; // more than the second before a bar shows
    bar.update(500);
    bar.stop();
    expect(err.text).toMatch(/export \[.*\] 50% \| 500\/1000 entries \| \d+ entries\/s \| ETA /);
  });

  it('without a total, counts what passed and its rate', async () => {
    const err = terminal();
    const bar = progress(undefined, 'state', { stream: err, unit: 'objects', now });
    const pages = (async function* () {
      yield [1, 2, 3];
      ms += 1100; // more than the second before a bar shows
      yield [4, 5];
    })();
    const seen: number[] = [];
    for await (const page of counted(pages, bar)) seen.push(...page);
    bar.stop();
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(err.text).toMatch(/state 5 objects \| \d+ objects\/s/);
  });

  it('prints nothing extra when stderr is not a terminal, or when the output goes to the terminal itself', async () => {
    const piped = terminal();
    piped.isTTY = false;
    const onTerminalOutput = terminal();
    const bars = [progress(100, 'log', { stream: piped, now }), progress(100, 'log', { stream: onTerminalOutput, out: terminal(), now })];
    ms += 1100; // more than the second before a bar shows
    for (const bar of bars) {
      bar.update(50);
      bar.stop();
    }
    expect([piped.text, onTerminalOutput.text]).toEqual(['', '']);
  });
});
