import { LogError, type Log, type LogRecord, type Author } from '../log/log.js';
import { stampVersion } from '../log/stamp.js';
import { failSpan, tracer } from '../observability/spans.js';
import { stageLap, stageStart } from '../observability/stage-timing.js';
import type { KubeObject } from '../api/types.js';
import { StoreError } from './errors.js';
import { checkExpected, MAX_TRIES, type Expected } from './preconditions.js';
import type { Change } from './change.js';
import type { StoredObject } from './stored-object.js';

/** A key's state as a write decides on it. */
export interface KeyState {
  seq: number;
  obj: KubeObject;
}

export type UpdateResult = { kind: 'put'; obj: KubeObject } | { kind: 'delete'; obj: KubeObject } | { kind: 'noop' };

/**
 * The store's writes, for both kinds of log. On a log with one writer (LevelDB, memory) the state a
 * write is checked against is the view plus this process's writes not yet committed (pending): the
 * check and the append are one synchronous step, so two writers can never both win, and the log
 * gives the seq at once. On a shared log (etcd) the view may lag what other replicas wrote, so etcd
 * checks each write (a compare on the key's mod revision, LogRecord.expect) and the seq comes with
 * its answer; a write decided on a state that turns out stale reads the key's fresh state and
 * decides again, as kube-apiserver's GuaranteedUpdate does, and a client's precondition that the
 * fresh state does not meet is the answer (409).
 */
export class Writer {
  /** One writer only: appended but not yet committed, key → its newest pending version (null = pending delete). */
  private readonly pending = new Map<string, { seq: number; obj: KubeObject | null }>();
  /**
   * Keys with writes of this process in flight, how many, and the change the view last applied to
   * each: when it is a write's own, its JSON (Change.encodedJson, made by the first watcher it was sent to)
   * is the write's answer. Found by the write's seq on the change, not kept on the stored object.
   */
  private readonly inFlight = new Map<string, { writes: number; change?: Change }>();
  /**
   * A put's JSON by seq, made while its batch is written (null: not made yet), and the puts waiting
   * for it. On a log with one writer the object is final once appended (its version stamped), so
   * its JSON, which is the write's answer and its watchers' event, is made in the wait for the disk
   * instead of after it: at one client, off the path from the sync to the answer.
   */
  private readonly early = new Map<number, Buffer | null>();
  private toEncode: { seq: number; obj: KubeObject }[] = [];

  constructor(
    private readonly log: Log,
    /** The key's state in the view (committed). */
    private readonly committed: (key: string) => StoredObject | undefined,
    /** Who is writing now (the request's user, verb, field manager): kept with each entry. */
    private readonly writerOf?: () => Author | undefined,
  ) {}

  /** The newest state of key including appended-but-not-yet-durable writes: what preconditions check. */
  latest(key: string): KeyState | undefined {
    const p = this.pending.get(key);
    if (p) return p.obj ? { seq: p.seq, obj: p.obj } : undefined;
    const c = this.committed(key);
    return c ? { seq: c.seq, obj: c.obj } : undefined;
  }

  /** The view applied an entry: a pending write it was is pending no more, and its change is its writer's answer. */
  applied(change: Change): void {
    const p = this.pending.get(change.key);
    if (p && p.seq === change.seq) this.pending.delete(change.key);
    const json = this.early.get(change.seq);
    if (json) change.encodedBy(json);
    const f = this.inFlight.get(change.key);
    if (f) f.change = change;
  }

  /** The view moved to a relisted state at seq: every write up to it is in it (or was replaced). */
  relisted(seq: number): void {
    for (const [key, p] of this.pending) if (p.seq <= seq) this.pending.delete(key);
  }

  /** Appends a put if key is in the expected state; resolves with the committed version once durable. */
  put(key: string, obj: KubeObject, expected: Expected): Promise<StoredObject> {
    return this.checked(key, 'put', obj, expected);
  }

  /** Appends a delete if key is in the expected state; the record carries obj as the last state. */
  remove(key: string, obj: KubeObject, expected: Expected): Promise<StoredObject> {
    return this.checked(key, 'delete', obj, expected);
  }

  /**
   * Removes key whatever its stored state: a delete record carrying obj (what is known of the object,
   * its identity), for objects that cannot be read, which no precondition can be checked on.
   */
  async removeUnreadable(key: string, obj: KubeObject): Promise<void> {
    await this.append(key, 'delete', obj, undefined);
  }

  /**
   * Read-modify-write (Kubernetes' GuaranteedUpdate): fn sees the newest state and returns what to
   * write (or the same object to do nothing); if another write lands while fn runs (it may await
   * admission), fn runs again on the new state. On a shared log the first state is the view's,
   * which may be stale: when fn refuses it, or etcd refuses the write, the key's fresh state is read
   * and fn decides again, so only a refusal of the fresh state is the answer.
   */
  async update(key: string, fn: (cur: KeyState | undefined) => Promise<UpdateResult> | UpdateResult, maxTries = MAX_TRIES): Promise<{ stored: StoredObject | undefined; result: UpdateResult }> {
    const shared = this.log.shared;
    let state = this.latest(key);
    let current = !shared;
    for (let attempt = 0; attempt < maxTries; attempt++) {
      let result: UpdateResult;
      try {
        result = await fn(state);
      } catch (err) {
        if (current) throw err;
        const fresh = await this.fresh(key);
        current = true;
        if (fresh?.seq === state?.seq) throw err;
        state = fresh;
        continue;
      }
      if (!shared) {
        const now = this.latest(key);
        if (now?.seq !== state?.seq) {
          state = now;
          continue;
        }
      }
      if (result.kind === 'noop') {
        // Nothing to write is an answer only about the fresh state.
        if (!current) {
          const fresh = await this.fresh(key);
          current = true;
          if (fresh?.seq !== state?.seq) {
            state = fresh;
            continue;
          }
        }
        const held = state && this.committed(key);
        return { stored: state && (held?.seq === state.seq ? held : { key, seq: state.seq, obj: state.obj }), result };
      }
      if (result.kind === 'delete' && !state) throw new StoreError('NOT_FOUND', key, `key ${key} not found`);
      try {
        const stored = shared
          ? await this.append(key, result.kind === 'put' ? 'put' : 'delete', result.obj, state?.seq ?? 0)
          : await this.checked(key, result.kind === 'put' ? 'put' : 'delete', result.obj, state ? { seq: state.seq } : 'absent');
        return { stored, result };
      } catch (err) {
        if (!(err instanceof LogError && err.code === 'CONFLICT')) throw err;
        // Another replica wrote first: fn decides again on what etcd holds now.
        state = stateOf(err);
        current = true;
      }
    }
    throw new StoreError('TOO_MANY_RETRIES', key, `too many concurrent writes to ${key}`);
  }

  /** The key's state as the log holds it now (a quorum read on a shared log), not as the view does. */
  private async fresh(key: string): Promise<KeyState | undefined> {
    const e = await this.log.current!(key);
    return e && e.type === 'put' ? { seq: e.seq, obj: e.value as KubeObject } : undefined;
  }

  /** One write checked against expected: by this process at once (one writer), or by the shared log. */
  private checked(key: string, type: LogRecord['type'], obj: KubeObject, expected: Expected): Promise<StoredObject> {
    if (this.log.shared) return this.checkedByLog(key, type, obj, expected);
    let cur: { seq: number } | undefined;
    try {
      cur = checkExpected(key, this.latest(key), expected);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.append(key, type, obj, cur?.seq ?? 0);
  }

  private async checkedByLog(key: string, type: LogRecord['type'], obj: KubeObject, expected: Expected): Promise<StoredObject> {
    // 'any' asks only that the key exists: the view's version is a first guess that etcd corrects.
    let expect = expected === 'absent' ? 0 : expected === 'any' ? (this.committed(key)?.seq ?? 0) : expected.seq;
    for (let tries = 1; ; tries++) {
      try {
        return await this.append(key, type, obj, expect);
      } catch (err) {
        if (!(err instanceof LogError && err.code === 'CONFLICT')) throw err;
        const at = err.seq ?? 0;
        if (expected === 'absent') throw new StoreError('KEY_EXISTS', key, `key ${key} exists at ${at}`, at);
        if (at === 0) throw new StoreError('NOT_FOUND', key, `key ${key} not found`);
        if (expected !== 'any') throw new StoreError('CONFLICT', key, `key ${key} is at ${at}, not ${expected.seq}`, at);
        if (tries >= MAX_TRIES) throw new StoreError('TOO_MANY_RETRIES', key, `too many concurrent writes to ${key}`);
        expect = at;
      }
    }
  }

  /**
   * expect: the seq of the key's state this write was decided on (0: none), for a shared log to
   * check. Resolves once the view has applied the write (the log acknowledges after committed$),
   * with the JSON its watchers got when one encoded it already.
   */
  private append(key: string, type: LogRecord['type'], obj: KubeObject, expect: number | undefined): Promise<StoredObject> {
    // A child of the request's span (the active context), ending when the write is durable: the
    // group commit's wait shows in the trace.
    const span = tracer().startSpan('log.append', { attributes: { 'orchd.log.key': key, 'orchd.log.record': type } });
    const t = stageStart();
    const { seq: known, durable } = this.log.append({ type, key, value: obj, expect, writer: this.writerOf?.() });
    const appended = stageLap('encode', t);
    let flight = this.inFlight.get(key);
    if (!flight) this.inFlight.set(key, (flight = { writes: 0 }));
    flight.writes++;
    const landed = () => {
      if (--flight.writes === 0) this.inFlight.delete(key);
    };
    if (known !== undefined) {
      span.setAttribute('orchd.log.seq', known);
      this.pending.set(key, { seq: known, obj: type === 'put' ? obj : null });
      if (type === 'put') this.encodeSoon(known, obj);
    }
    return durable.then(
      (seq) => {
        stageLap('append', appended);
        span.end();
        // A shared log stored obj without its version: the answer carries it.
        stampVersion(obj, seq);
        const json = (flight.change?.seq === seq ? flight.change.encodedJson : undefined) ?? this.early.get(seq);
        this.early.delete(seq);
        landed();
        return json ? { key, seq, obj, json } : { key, seq, obj };
      },
      (err: unknown) => {
        if (known !== undefined) this.early.delete(known);
        landed();
        if (known !== undefined && this.pending.get(key)?.seq === known) this.pending.delete(key);
        failSpan(span, err);
        span.end();
        throw err;
      },
    );
  }

  /**
   * Queues obj's JSON for the turn after the log started writing its batch (the log's flush is an
   * immediate queued before this one; a batch waiting behind another is written meanwhile). A put
   * answered first (a log that syncs at once) is not encoded at all: its answer made its own JSON.
   */
  private encodeSoon(seq: number, obj: KubeObject): void {
    this.early.set(seq, null);
    if (this.toEncode.length === 0) setImmediate(this.encodeQueued);
    this.toEncode.push({ seq, obj });
  }

  private readonly encodeQueued = (): void => {
    const queued = this.toEncode;
    this.toEncode = [];
    for (const { seq, obj } of queued) if (this.early.has(seq)) this.early.set(seq, Buffer.from(JSON.stringify(obj)));
  };
}

/** The key's state a CONFLICT found (none: the key does not exist). */
function stateOf(err: LogError): KeyState | undefined {
  const found = err.found;
  return found && found.type === 'put' ? { seq: found.seq, obj: found.value as KubeObject } : undefined;
}
