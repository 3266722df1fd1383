import { afterEach, describe, expect, it, vi } from 'vitest';
import { LogError, partBuffer, type Appended, type Checkpoint, type Log, type LogEntry, type LogErrorCode, type SavedCheckpoint } from '../../src/log/log.js';
import { sleep } from '../helpers/poll.js';

/**
 * The log contract (src/log/log.ts) as one suite that every backend runs, as abstract-level's test
 * suite runs against every store (style.md section 7). A backend that cannot offer a feature says
 * why in skip, and the suite shows the reason in the skipped test's name.
 */
export interface LogContractOptions<L extends Log> {
  name: string;
  /** A new, open, empty log on storage of its own. */
  newLog: () => Promise<L>;
  /** Close log and open a new log on its storage: a restart. */
  reopen?: (log: L) => Promise<L>;
  /** Make every later write to log's storage fail (a full or failing disk). */
  breakStorage?: (log: L) => void | Promise<void>;
  /**
   * Why a part does not apply to this log. compaction and checkpoints: a read-only log (the
   * replay's) whose history is never compacted and whose store is never restarted.
   */
  skip?: { reopen?: string; breakStorage?: string; dense?: string; compaction?: string; checkpoints?: string };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

function put(log: Log, key: string, value: unknown): Appended {
  return log.append({ type: 'put', key, value });
}

/** Appends n records in one tick and waits until all are durable; returns their seqs. */
/** An entry's fields as a plain object: one read from storage decodes its value when asked. */
const plain = (e: LogEntry) => ({ seq: e.seq, type: e.type, key: e.key, value: e.value });

/** A checkpoint of parts given as lists of pieces of bytes. */
function checkpoint(seq: number, parts: number[][][]): Checkpoint {
  return {
    seq,
    parts: (async function* () {
      for (const pieces of parts) yield pieces.map((p) => new Uint8Array(p));
    })(),
  };
}

async function partsOf(cp: SavedCheckpoint | undefined): Promise<number[][]> {
  const out: number[][] = [];
  for await (const part of cp?.parts ?? []) out.push([...partBuffer(part)]);
  return out;
}

async function fill(log: Log, n: number, value: (i: number) => unknown = (i) => ({ i })): Promise<number[]> {
  const appended = Array.from({ length: n }, (_, i) => put(log, `k${i % 100}`, value(i)));
  return Promise.all(appended.map((a) => a.durable));
}

async function pages(log: Log, from: number, to?: number): Promise<LogEntry[][]> {
  const out: LogEntry[][] = [];
  for await (const page of log.read(from, to)) out.push(page);
  return out;
}

async function entries(log: Log, from: number, to?: number): Promise<LogEntry[]> {
  return (await pages(log, from, to)).flat();
}

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

async function expectLogError(p: Promise<unknown>, code: LogErrorCode): Promise<LogError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LogError);
  expect((err as LogError).code).toBe(code);
  return err as LogError;
}

function expectThrowsLogError(fn: () => unknown, code: LogErrorCode): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(LogError);
  expect((err as LogError).code).toBe(code);
}

/** Values that must come back as the same JSON, key order included. */
const VALUES: [string, unknown][] = [
  ['unicode in keys and values', { ключ: 'значение', emoji: '🎉 👩‍👩‍👧', cjk: '漢字かな', nul: 'a\u0000b', rtl: 'עברית' }],
  ['nested empty objects and arrays', { a: {}, b: [], c: [{}, [], [[]]], d: { e: { f: {} } } }],
  ['strings that look like other types', { n: '123', f: '1.50', e: '1e3', neg: '-0', t: 'true', nul: 'null', hex: '0x1f', empty: '' }],
  ['numbers', { zero: 0, neg: -7, big: 2 ** 40, max: Number.MAX_SAFE_INTEGER, min: Number.MIN_SAFE_INTEGER, f: 0.1, tiny: 5e-324, huge: 1.7e308, u32: 4294967295, i32: -2147483648 }],
  ['null and booleans', { n: null, t: true, f: false, arr: [null, true, false] }],
  ['integer-like and odd keys', { '10': 'a', '2': 'b', '': 'empty', ' ': 'space', 'a.b/c~d': 'path' }],
  ['a "__proto__" key, as JSON.parse makes it', JSON.parse('{"__proto__": {"x": 1}, "data": {"__proto__": "v", "__proto_": "w"}}')],
  ['a top-level array', [1, 'two', { three: [3] }]],
  ['a bare string', 'just a string'],
  ['a long string', 'x'.repeat(100_000)],
  ['deep nesting', JSON.parse('['.repeat(60) + ']'.repeat(60))],
  [
    'a realistic object',
    {
      apiVersion: 'admissionregistration.orch.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'demo', resourceVersion: '12', labels: { app: 'x' }, annotations: {}, managedFields: [] },
      spec: { validations: [{ expression: "object.spec.replicas <= 5 && object.metadata.name != ''" }], matchConstraints: { resourceRules: [] } },
    },
  ],
];

export function runLogContract<L extends Log>(opts: LogContractOptions<L>): void {
  const open: Log[] = [];
  const newLog = async () => {
    const log = await opts.newLog();
    open.push(log);
    return log;
  };
  const reopen = async (log: L) => {
    const next = await opts.reopen!(log);
    open.push(next);
    return next;
  };

  afterEach(async () => {
    await Promise.all(open.splice(0).map((log) => log.close().catch(() => {})));
  });

  const withReopen = opts.reopen ? it : it.skip;
  const reopenNote = opts.reopen ? '' : ` (skipped: ${opts.skip?.reopen ?? 'no reason given'})`;
  if (!opts.reopen && !opts.skip?.reopen) throw new Error(`${opts.name}: give reopen or a skip.reopen reason`);
  const withBreak = opts.breakStorage ? it : it.skip;
  const breakNote = opts.breakStorage ? '' : ` (skipped: ${opts.skip?.breakStorage ?? 'no reason given'})`;
  if (!opts.breakStorage && !opts.skip?.breakStorage) throw new Error(`${opts.name}: give breakStorage or a skip.breakStorage reason`);

  // A shared log's seqs are etcd revisions, with holes, and each write is its own transaction: the
  // tests that count seqs or look at batches are a log with one writer's (group commit).
  const denseNote = opts.skip?.dense ? ` (skipped: ${opts.skip.dense})` : '';
  const withDense = (name: string, fn: () => Promise<void>) => (opts.skip?.dense ? it.skip : it)(name + denseNote, fn);
  const eachDense = ((rows: readonly unknown[]) => (opts.skip?.dense ? it.skip.each(rows) : it.each(rows))) as typeof it.each;
  const withReopenDense = (name: string, fn: () => Promise<void>) => (opts.reopen && !opts.skip?.dense ? it : it.skip)(name + (reopenNote || denseNote), fn);

  describe(`log contract: ${opts.name}`, () => {
    describe('append', () => {
      withDense('an empty log has lastSeq 0 and firstSeq 1 and reads nothing', async () => {
        const log = await newLog();
        expect([log.lastSeq, log.firstSeq]).toEqual([0, 1]);
        expect(await entries(log, 1)).toEqual([]);
        expect(await log.get(1)).toBeUndefined();
      });

      withDense('seqs count from 1 in call order; durable resolves with the seq, which values with metadata carry as resourceVersion', async () => {
        const log = await newLog();
        const values = range(1, 5).map((i) => ({ metadata: { name: `k${i}`, resourceVersion: 'stale' }, i }));
        const appended = values.map((value, i) => log.append({ type: 'put', key: `k${i + 1}`, value }));
        expect(appended.map((a) => a.seq)).toEqual([1, 2, 3, 4, 5]);
        expect(await Promise.all(appended.map((a) => a.durable))).toEqual([1, 2, 3, 4, 5]);
        expect(values.map((v) => v.metadata.resourceVersion)).toEqual(['1', '2', '3', '4', '5']);
        const read = await entries(log, 1);
        expect(read.map((e) => [e.seq, e.key, (e.value as { metadata: { resourceVersion: string } }).metadata.resourceVersion])).toEqual(range(1, 5).map((i) => [i, `k${i}`, String(i)]));
      });

      it('lastSeq moves only when the write is durable', async () => {
        const log = await newLog();
        const before = log.lastSeq;
        const a = put(log, 'k', 1);
        expect(log.lastSeq).toBe(before);
        const seq = await a.durable;
        expect(seq).toBeGreaterThan(before);
        expect(log.lastSeq).toBeGreaterThanOrEqual(seq);
      });

      it('committed$ emits an entry before its writer is acknowledged', async () => {
        const log = await newLog();
        const emitted = new Set<number>();
        log.committed$.subscribe((batch) => batch.forEach((e) => emitted.add(e.seq)));
        const seenAtAck: boolean[] = [];
        for (let round = 0; round < 5; round++) {
          const appended = range(1, 4).map(() => put(log, 'k', round));
          await Promise.all(appended.map((a) => a.durable.then((seq) => seenAtAck.push(emitted.has(seq)))));
        }
        expect(seenAtAck).toHaveLength(20);
        expect(seenAtAck.every(Boolean)).toBe(true);
      });

      withDense('appends of one tick share one batch', async () => {
        const log = await newLog();
        const batches: number[][] = [];
        log.committed$.subscribe((b) => batches.push(b.map((e) => e.seq)));
        await fill(log, 10);
        expect(batches).toEqual([range(1, 10)]);
      });

      withDense('appends made while a batch is being written go out together in the next batch', async () => {
        const log = await newLog();
        const batches: number[][] = [];
        log.committed$.subscribe((b) => batches.push(b.map((e) => e.seq)));
        const first = put(log, 'a', 1);
        await tick(); // the first batch has started writing
        const later: Appended[] = [];
        for (let i = 0; i < 3; i++) {
          later.push(put(log, 'b', i));
          await Promise.resolve();
        }
        await Promise.all([first, ...later].map((a) => a.durable));
        expect(batches).toEqual([[1], [2, 3, 4]]);
      });

      it('committed$ is hot, ordered and gap-free, and its entries equal what read() returns', async () => {
        const log = await newLog();
        const early = await fill(log, 3); // before the subscription: not replayed
        const seen: LogEntry[] = [];
        log.committed$.subscribe((b) => seen.push(...b));
        const seqs: number[] = [];
        for (let round = 0; round < 4; round++) seqs.push(...(await fill(log, 1 + round * 7, (i) => ({ round, i, s: `${round}-${i}` }))));
        expect(seen.map((e) => e.seq)).toEqual([...seqs].sort((a, b) => a - b));
        expect(seen.every((e) => e.seq > Math.max(...early))).toBe(true);
        expect((await entries(log, seen[0].seq)).map(plain)).toEqual(seen.map(plain));
      });

      it.each([
        ['an unknown type', { type: 'patch', key: 'k', value: 1 }],
        ['a key that is not a string', { type: 'put', key: 7, value: 1 }],
      ])('a record with %s is refused and uses up no seq', async (_name, record) => {
        const log = await newLog();
        const before = log.lastSeq;
        expect(() => log.append(record as never)).toThrow(TypeError);
        expect(log.lastSeq).toBe(before);
        await put(log, 'k', 1).durable;
      });

      it('a delete record round-trips with its last state', async () => {
        const log = await newLog();
        await put(log, 'ns/x', { gone: true }).durable;
        const seq = await log.append({ type: 'delete', key: 'ns/x', value: { gone: true } }).durable;
        expect(plain((await log.get(seq))!)).toEqual({ seq, type: 'delete', key: 'ns/x', value: { gone: true } });
      });
    });

    describe('commit times', () => {
      withDense('every entry carries the wall-clock time of its batch: shared by the batch, within append..ack, the same in committed$, read() and get()', async () => {
        const log = await newLog();
        const committed = new Map<number, number | undefined>();
        log.committed$.subscribe((b) => b.forEach((e) => committed.set(e.seq, e.time)));
        const before = Date.now();
        const first = await fill(log, 5);
        const between = Date.now();
        await sleep(5);
        const second = await fill(log, 3);
        const after = Date.now();
        const read = await entries(log, 1);
        const times = read.map((e) => e.time!);
        expect(new Set(times.slice(0, first.length)).size).toBe(1);
        expect(new Set(times.slice(first.length)).size).toBe(1);
        expect(times[0]).toBeGreaterThanOrEqual(before);
        expect(times[0]).toBeLessThanOrEqual(between);
        expect(times[first.length]).toBeGreaterThan(times[0]);
        expect(times[first.length]).toBeLessThanOrEqual(after);
        expect(read.map((e) => committed.get(e.seq))).toEqual(times);
        expect((await log.get(second[1]))!.time).toBe(times[first.length + 1]);
      });

      withReopenDense(`commit times never go back, even across a restart with a clock that stepped back${reopenNote}`, async () => {
        let log = await newLog();
        await fill(log, 2);
        const [{ time: t1 }] = await entries(log, 1, 1);
        log = await reopen(log as L);
        const clock = vi.spyOn(Date, 'now').mockReturnValue(t1! - 60_000);
        try {
          await fill(log, 2);
        } finally {
          clock.mockRestore();
        }
        const times = (await entries(log, 1)).map((e) => e.time);
        expect(times).toEqual([t1, t1, t1, t1]);
      });
    });

    describe('read and get', () => {
      eachDense([
        ['everything', 1, undefined, range(1, 10)],
        ['from 0 (nothing is compacted below 1)', 0, undefined, range(1, 10)],
        ['a middle range, both ends included', 3, 7, range(3, 7)],
        ['one entry', 5, 5, [5]],
        ['to past lastSeq is capped at lastSeq', 8, 99, range(8, 10)],
        ['from past lastSeq', 11, undefined, []],
        ['from after to', 7, 3, []],
      ])('read: %s', async (_name, from, to, want) => {
        const log = await newLog();
        await fill(log, 10);
        expect((await entries(log, from, to)).map((e) => e.seq)).toEqual(want);
      });

      withDense('read comes in pages of at most 1000, in order', async () => {
        const log = await newLog();
        await fill(log, 2500);
        const got = await pages(log, 1);
        expect(got.map((p) => p.length)).toEqual([1000, 1000, 500]);
        expect(got.flat().map((e) => e.seq)).toEqual(range(1, 2500));
      });

      withDense('a read does not see appends made after it started', async () => {
        const log = await newLog();
        await fill(log, 1500);
        const it = log.read(1)[Symbol.asyncIterator]();
        const firstPage = await it.next();
        await fill(log, 10);
        const rest: LogEntry[] = [];
        for (let r = await it.next(); !r.done; r = await it.next()) rest.push(...r.value);
        expect(firstPage.value).toHaveLength(1000);
        expect(rest.map((e) => e.seq)).toEqual(range(1001, 1500));
      });

      withDense('a reader may stop early', async () => {
        const log = await newLog();
        await fill(log, 1500);
        for await (const page of log.read(1)) {
          expect(page[0].seq).toBe(1);
          break;
        }
        await fill(log, 1);
        expect(log.lastSeq).toBe(1501);
      });

      eachDense([
        ['seq 0', 0],
        ['past lastSeq', 11],
        ['not an integer', 1.5],
      ])('get: %s is undefined', async (_name, seq) => {
        const log = await newLog();
        await fill(log, 10);
        expect(await log.get(seq)).toBeUndefined();
      });

      withDense('get returns the entry as read() does', async () => {
        const log = await newLog();
        await fill(log, 10);
        expect(plain((await log.get(7))!)).toEqual(plain((await entries(log, 7, 7))[0]));
      });

      it.each([
        ['negative', -1],
        ['not an integer', 2.5],
        ['NaN', Number.NaN],
      ])('read: a from that is %s is a programming error', async (_name, from) => {
        const log = await newLog();
        await expect(entries(log, from)).rejects.toThrow(RangeError);
      });
    });

    describe('values', () => {
      it.each(VALUES)('%s round-trip exactly', async (_name, value) => {
        const log = await newLog();
        const committed: LogEntry[] = [];
        log.committed$.subscribe((b) => committed.push(...b));
        const seq = await put(log, 'k', value).durable;
        const [read] = await entries(log, seq, seq);
        const got = await log.get(seq);
        for (const e of [read, got!, committed[0]]) {
          expect(e.value).toEqual(value);
          expect(JSON.stringify(e.value)).toBe(JSON.stringify(value));
        }
        // One writer hands its own object on; a shared log hands on what it read back.
        if (!log.shared) expect(committed[0].value).toBe(value);
      });
    });

    (opts.skip?.compaction ? describe.skip : describe)(`compaction${opts.skip?.compaction ? ` (skipped: ${opts.skip.compaction})` : ''}`, () => {
      withDense('below the horizon reads fail with COMPACTED and get finds nothing; lastSeq stays', async () => {
        const log = await newLog();
        await fill(log, 30);
        await log.compact(11);
        expect([log.firstSeq, log.lastSeq]).toEqual([11, 30]);
        const err = await expectLogError(entries(log, 5), 'COMPACTED');
        expect(err.seq).toBe(5);
        await expectLogError(entries(log, 10, 20), 'COMPACTED');
        expect(await log.get(10)).toBeUndefined();
        expect((await log.get(11))?.seq).toBe(11);
        expect((await entries(log, 11)).map((e) => e.seq)).toEqual(range(11, 30));
      });

      withDense('the horizon is capped at lastSeq + 1, never moves back, and appends continue above it', async () => {
        const log = await newLog();
        await fill(log, 10);
        await log.compact(1000);
        expect([log.firstSeq, log.lastSeq]).toEqual([11, 10]);
        expect(await entries(log, 11)).toEqual([]);
        await log.compact(5);
        expect(log.firstSeq).toBe(11);
        const a = put(log, 'k', 'after');
        expect(a.seq).toBe(11);
        await a.durable;
        expect((await entries(log, 11)).map((e) => e.value)).toEqual(['after']);
      });

      withDense('entries a compaction keeps stay readable by get; a later compaction that does not keep them drops them', async () => {
        const log = await newLog();
        await fill(log, 30);
        await log.compact(21, (seq) => seq === 4 || seq === 17);
        expect(log.firstSeq).toBe(21);
        await expectLogError(entries(log, 17), 'COMPACTED');
        expect((await log.get(4))?.seq).toBe(4);
        expect((await log.get(17))?.seq).toBe(17);
        expect(await log.get(5)).toBeUndefined();
        await log.compact(25, (seq) => seq === 17);
        expect(await log.get(4)).toBeUndefined();
        expect((await log.get(17))?.seq).toBe(17);
        expect((await entries(log, 25)).map((e) => e.seq)).toEqual(range(25, 30));
      });

      withDense('a read with kept starts with the entries compaction kept below the horizon, then goes on from it', async () => {
        const log = await newLog();
        await fill(log, 30);
        await log.compact(21, (seq) => seq === 4 || seq === 17);
        const all: LogEntry[] = [];
        for await (const page of log.read(0, undefined, { kept: true })) all.push(...page);
        expect(all.map((e) => e.seq)).toEqual([4, 17, ...range(21, 30)]);
      });

      withDense('compactions run one after another', async () => {
        const log = await newLog();
        await fill(log, 20);
        await Promise.all([log.compact(8), log.compact(5), log.compact(15)]);
        expect(log.firstSeq).toBe(15);
        expect((await entries(log, 15)).map((e) => e.seq)).toEqual(range(15, 20));
      });

      withDense('appends keep flowing while a compaction deletes', async () => {
        const log = await newLog();
        await fill(log, 5000);
        let done = false;
        const compaction = log.compact(4901).then(() => (done = true));
        let ackedDuring = 0;
        for (let i = 0; i < 1000 && !done; i++) {
          await put(log, 'during', i).durable;
          if (!done) ackedDuring++;
        }
        await compaction;
        expect(ackedDuring).toBeGreaterThan(0);
        expect(log.firstSeq).toBe(4901);
        expect((await entries(log, 4901)).map((e) => e.seq)).toEqual(range(4901, log.lastSeq));
      });

      withDense('a read that started before a compaction still sees its entries', async () => {
        const log = await newLog();
        await fill(log, 2500);
        const it = log.read(1)[Symbol.asyncIterator]();
        const got = [...((await it.next()).value as LogEntry[])];
        await log.compact(2001);
        for (let r = await it.next(); !r.done; r = await it.next()) got.push(...r.value);
        expect(got.map((e) => e.seq)).toEqual(range(1, 2500));
        await expectLogError(entries(log, 1), 'COMPACTED');
      });
    });

    (opts.skip?.checkpoints ? describe.skip : describe)(`checkpoints${opts.skip?.checkpoints ? ` (skipped: ${opts.skip.checkpoints})` : ''}`, () => {
      it('there is none at first; the last saved one is loaded, each part as its pieces joined', async () => {
        const log = await newLog();
        expect(await log.loadCheckpoint()).toBeUndefined();
        await fill(log, 5);
        await log.saveCheckpoint(checkpoint(3, [[[1, 2, 3]]]));
        await log.saveCheckpoint(checkpoint(5, [[[9, 0], [255]], [[7]], [], [[1], [], [2, 3]]]));
        const cp = await log.loadCheckpoint();
        expect(cp?.seq).toBe(5);
        expect(await partsOf(cp)).toEqual([[9, 0, 255], [7], [], [1, 2, 3]]);
      });

      it('an empty checkpoint at seq 0 round-trips', async () => {
        const log = await newLog();
        await log.saveCheckpoint(checkpoint(0, []));
        const cp = await log.loadCheckpoint();
        expect(cp?.seq).toBe(0);
        expect(await partsOf(cp)).toEqual([]);
      });

      it('a checkpoint past lastSeq is refused with FUTURE_SEQ before its parts are read', async () => {
        const log = await newLog();
        await fill(log, 2);
        let read = false;
        const parts = (async function* () {
          read = true;
          yield [new Uint8Array([1])];
        })();
        const err = await expectLogError(log.saveCheckpoint({ seq: log.lastSeq + 1, parts }), 'FUTURE_SEQ');
        expect(err.seq).toBe(log.lastSeq + 1);
        expect(read).toBe(false);
        expect(await log.loadCheckpoint()).toBeUndefined();
      });

      it('a save that fails while its parts are read leaves the previous checkpoint', async () => {
        const log = await newLog();
        await fill(log, 4);
        await log.saveCheckpoint(checkpoint(2, [[[2]]]));
        const parts = (async function* () {
          yield [new Uint8Array([4])];
          throw new Error('encoding failed');
        })();
        await expect(log.saveCheckpoint({ seq: 4, parts })).rejects.toThrow('encoding failed');
        const cp = await log.loadCheckpoint();
        expect([cp?.seq, await partsOf(cp)]).toEqual([2, [[2]]]);
      });

      withDense('a checkpoint survives compaction past it', async () => {
        const log = await newLog();
        await fill(log, 10);
        await log.saveCheckpoint(checkpoint(8, [[[8]]]));
        await log.compact(10);
        expect((await log.loadCheckpoint())?.seq).toBe(8);
      });
    });

    describe('close', () => {
      it('a closed log refuses appends with CLOSED', async () => {
        const log = await newLog();
        await log.close();
        expectThrowsLogError(() => put(log, 'k', 1), 'CLOSED');
      });

      it('reads, get, compaction and checkpoints on a closed log fail with CLOSED', async () => {
        const log = await newLog();
        await fill(log, 3);
        await log.close();
        await expectLogError(entries(log, 1), 'CLOSED');
        await expectLogError(log.get(1), 'CLOSED');
        await expectLogError(log.compact(2), 'CLOSED');
        await expectLogError(log.loadCheckpoint(), 'CLOSED');
      });

      it('close writes and acknowledges what was appended before it, then completes committed$', async () => {
        const log = await newLog();
        const seen: number[] = [];
        let completed = false;
        log.committed$.subscribe({ next: (b) => seen.push(...b.map((e) => e.seq)), complete: () => (completed = true) });
        const appended = range(1, 5).map((i) => put(log, 'k', i));
        const closed = log.close();
        expectThrowsLogError(() => put(log, 'k', 'late'), 'CLOSED');
        const seqs = await Promise.all(appended.map((a) => a.durable));
        await closed;
        expect(seen).toEqual([...seqs].sort((a, b) => a - b));
        expect(completed).toBe(true);
        expect(log.lastSeq).toBeGreaterThanOrEqual(Math.max(...seqs));
      });

      it('close may be called twice', async () => {
        const log = await newLog();
        await Promise.all([log.close(), log.close()]);
        await log.close();
      });
    });

    describe('restart', () => {
      withReopenDense(`reopen recovers lastSeq, firstSeq, entries and the checkpoint${reopenNote}`, async () => {
        let log = await newLog();
        await fill(log, 40, (i) => ({ i, s: `v${i}` }));
        await log.compact(11);
        await log.saveCheckpoint(checkpoint(30, [[[3, 0]], [[1]]]));
        const before = await entries(log, 11);
        log = await reopen(log as L);
        expect([log.firstSeq, log.lastSeq]).toEqual([11, 40]);
        expect((await entries(log, 11)).map(plain)).toEqual(before.map(plain));
        await expectLogError(entries(log, 10), 'COMPACTED');
        const cp = await log.loadCheckpoint();
        expect([cp?.seq, await partsOf(cp)]).toEqual([30, [[3, 0], [1]]]);
      });

      withReopenDense(`appends after a restart continue from lastSeq + 1${reopenNote}`, async () => {
        let log = await newLog();
        await fill(log, 7);
        log = await reopen(log as L);
        const a = put(log, 'k', 'next');
        expect(a.seq).toBe(8);
        await a.durable;
        expect((await log.get(8))?.value).toBe('next');
      });

      withReopenDense(`a log compacted to empty keeps its lastSeq across a restart${reopenNote}`, async () => {
        let log = await newLog();
        await fill(log, 12);
        await log.compact(13);
        log = await reopen(log as L);
        expect([log.firstSeq, log.lastSeq]).toEqual([13, 12]);
        expect(put(log, 'k', 1).seq).toBe(13);
      });

      withReopenDense(`an empty log reopens empty${reopenNote}`, async () => {
        let log = await newLog();
        log = await reopen(log as L);
        expect([log.firstSeq, log.lastSeq]).toEqual([1, 0]);
      });

      withReopen(`values round-trip exactly through a restart${reopenNote}`, async () => {
        let log = await newLog();
        const appended = VALUES.map(([name, value]) => put(log, name, value));
        const seqs = await Promise.all(appended.map((a) => a.durable));
        log = await reopen(log as L);
        // By key: on a shared log, writes in flight together commit in etcd's order.
        const got = new Map((await entries(log, Math.min(...seqs))).map((e) => [e.key, e.value]));
        expect(VALUES.map(([name]) => JSON.stringify(got.get(name)))).toEqual(VALUES.map(([, v]) => JSON.stringify(v)));
        expect(VALUES.map(([name]) => got.get(name))).toEqual(VALUES.map(([, v]) => v));
      });
    });

    describe('a failed write', () => {
      withBreak(`breaks the log: the failed batch, the batch queued behind it and all later appends fail with BROKEN${breakNote}`, async () => {
        const log = await newLog();
        await fill(log, 3);
        const seen: number[] = [];
        log.committed$.subscribe((b) => seen.push(...b.map((e) => e.seq)));
        await opts.breakStorage!(log as L);
        const failing = [put(log, 'k', 'a'), put(log, 'k', 'b')];
        await tick(); // that batch is being written
        const queued = put(log, 'k', 'c');
        for (const a of [...failing, queued]) {
          const err = await expectLogError(a.durable, 'BROKEN');
          expect(err.cause).toBeDefined();
        }
        expectThrowsLogError(() => put(log, 'k', 'd'), 'BROKEN');
        expect(log.lastSeq).toBe(3);
        expect(seen).toEqual([]);
        // What was durable before stays readable, and the log still closes.
        expect((await entries(log, 1)).map((e) => e.seq)).toEqual([1, 2, 3]);
        await log.close();
      });
    });
  });
}
