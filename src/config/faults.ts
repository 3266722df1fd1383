/**
 * FaultConfiguration (apiserver.config.orch.io/v1alpha1): the faults a server injects on demand, for
 * controllers' tests (`orchd serve --faults FILE`, startOrchd({faults}), PUT /debug/faults). Read
 * here, as every configuration file is, into the shape src/faults/ compiles; a rule that could never
 * act (a watch fault on a create, a stale read on a write) is refused with its field path, so a test
 * that meant to inject something cannot silently inject nothing.
 */
import { FieldPath, invalid, notSupported, required, forbidden, type FieldError } from '../api/field-errors.js';
import type { JsonObject } from '../api/json-access.js';
import { arrayOf, bool, int, obj, str, type Schema } from '../api/schema.js';
import { objectOf, objectsOf, optBool, optNumber, optString, stringsOf } from './checks.js';
import { V1ALPHA1, type DocumentKind, type ReadContext } from './document.js';
import { loadDocumentFile, loadDocumentText, type LoadResult } from './load.js';

export const FAULT_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] as const;
export type FaultVerb = (typeof FAULT_VERBS)[number];
export const FAULT_STATUSES = [409, 429, 500, 503, 504] as const;
export type FaultStatus = (typeof FAULT_STATUSES)[number];
export const WATCH_FAULTS = ['expire', 'drop', 'reset', 'lag'] as const;
export type WatchFault = (typeof WATCH_FAULTS)[number];

/** Which requests a rule looks at; an absent list is any. */
export interface FaultMatch {
  verbs?: FaultVerb[];
  /** `plural` (any group) or `plural.group`. */
  resources?: string[];
  subresources?: string[];
  namespaces?: string[];
  names?: string[];
  users?: string[];
  userAgents?: string[];
  fieldManagers?: string[];
}

export interface FaultInjection {
  status?: FaultStatus;
  /** A fixed delay, or [min, max] drawn from the seed. */
  latencyMs?: number | [number, number];
  watch?: WatchFault;
  commitThenDrop?: boolean;
  staleRead?: { maxVersionsBehind: number };
}

export interface FaultRule {
  name?: string;
  match: FaultMatch;
  probability?: number;
  first?: number;
  every?: number;
  after?: { requests?: number; events?: number };
  inject: FaultInjection;
}

export interface FaultConfiguration {
  seed: number;
  rules: FaultRule[];
}

const strings = arrayOf(str());
const schema: Schema = obj(undefined, {
  apiVersion: str(),
  kind: str(),
  seed: int(undefined, 'int64'),
  rules: arrayOf(
    obj(undefined, {
      name: str(),
      match: obj(undefined, {
        verbs: strings,
        resources: strings,
        subresources: strings,
        namespaces: strings,
        names: strings,
        users: strings,
        userAgents: strings,
        fieldManagers: strings,
      }),
      probability: { type: 'number' },
      first: int(),
      every: int(),
      after: obj(undefined, { requests: int(), events: int() }),
      inject: obj(undefined, {
        status: int(),
        // A number or a [min, max] pair: checked by the reader.
        latencyMs: {},
        watch: str(),
        commitThenDrop: bool(),
        staleRead: obj(undefined, { maxVersionsBehind: int() }),
      }),
    }),
  ),
});

const WRITES: readonly FaultVerb[] = ['create', 'update', 'patch', 'delete', 'deletecollection'];
const READS: readonly FaultVerb[] = ['get', 'list'];
/** Ten minutes: a longer delay is a hang, not latency. */
const MAX_LATENCY_MS = 600_000;

/** The verbs an injection can act on: a rule whose verbs hold none of them could never act. */
export function verbsActedOn(inject: FaultInjection, after?: FaultRule['after']): readonly FaultVerb[] {
  if (inject.watch !== undefined || after?.events !== undefined) return ['watch'];
  if (inject.commitThenDrop) return WRITES;
  if (inject.staleRead) return READS;
  return FAULT_VERBS;
}

function nonNegativeInt(o: JsonObject | undefined, key: string, path: FieldPath, min: number, errs: FieldError[]): number | undefined {
  const v = optNumber(o, key);
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < min) errs.push(invalid(path.child(key), v, `must be an integer of at least ${min}`));
  return v;
}

function readLatency(v: unknown, path: FieldPath, errs: FieldError[]): FaultInjection['latencyMs'] {
  const inRange = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= MAX_LATENCY_MS;
  if (typeof v === 'number') {
    if (!inRange(v)) errs.push(invalid(path, v, `must be an integer between 0 and ${MAX_LATENCY_MS}`));
    return v;
  }
  if (Array.isArray(v) && v.length === 2 && inRange(v[0]) && inRange(v[1]) && v[0] <= v[1]) return [v[0], v[1]];
  errs.push(invalid(path, v, `must be a number of milliseconds or a range [min, max] with 0 <= min <= max <= ${MAX_LATENCY_MS}`));
  return undefined;
}

function readInjection(o: JsonObject | undefined, path: FieldPath, errs: FieldError[]): FaultInjection {
  const inject: FaultInjection = {};
  if (!o || Object.keys(o).length === 0) {
    errs.push(required(path, 'one of status, latencyMs, watch, commitThenDrop, staleRead'));
    return inject;
  }
  const status = optNumber(o, 'status');
  if (status !== undefined) {
    if ((FAULT_STATUSES as readonly number[]).includes(status)) inject.status = status as FaultStatus;
    else errs.push(notSupported(path.child('status'), status, FAULT_STATUSES.map(String)));
  }
  if (o.latencyMs !== undefined && o.latencyMs !== null) {
    const l = readLatency(o.latencyMs, path.child('latencyMs'), errs);
    if (l !== undefined) inject.latencyMs = l;
  }
  const watch = optString(o, 'watch');
  if (watch !== undefined) {
    if ((WATCH_FAULTS as readonly string[]).includes(watch)) inject.watch = watch as WatchFault;
    else errs.push(notSupported(path.child('watch'), watch, WATCH_FAULTS));
  }
  if (optBool(o, 'commitThenDrop') === true) inject.commitThenDrop = true;
  const stale = objectOf(o, 'staleRead');
  if (stale) {
    const n = nonNegativeInt(stale, 'maxVersionsBehind', path.child('staleRead'), 1, errs);
    if (n === undefined) errs.push(required(path.child('staleRead', 'maxVersionsBehind')));
    else inject.staleRead = { maxVersionsBehind: n };
  }
  // One fault per rule; latency may come with any of them (a slow 504), and is what `watch: lag` delays by.
  const kinds = (['status', 'watch', 'commitThenDrop', 'staleRead'] as const).filter((k) => inject[k] !== undefined);
  if (kinds.length > 1) errs.push(forbidden(path.child(kinds[1]), `may not be combined with ${kinds[0]}: a rule injects one fault`));
  if (inject.watch === 'lag' && inject.latencyMs === undefined) errs.push(required(path.child('latencyMs'), 'watch: lag delays events by latencyMs'));
  return inject;
}

function readMatch(o: JsonObject | undefined, path: FieldPath, errs: FieldError[]): FaultMatch {
  const match: FaultMatch = {};
  if (!o) return match;
  for (const key of ['verbs', 'resources', 'subresources', 'namespaces', 'names', 'users', 'userAgents', 'fieldManagers'] as const) {
    if (!Array.isArray(o[key])) continue;
    const list = stringsOf(o, key);
    if (list.length === 0) errs.push(required(path.child(key), 'an empty list matches nothing: leave the field out to match any'));
    if (key === 'verbs') {
      list.forEach((v, i) => {
        if (!(FAULT_VERBS as readonly string[]).includes(v)) errs.push(notSupported(path.child(key).index(i), v, FAULT_VERBS));
      });
    }
    match[key] = list as FaultVerb[];
  }
  return match;
}

function readRule(o: JsonObject, path: FieldPath, errs: FieldError[]): FaultRule {
  const rule: FaultRule = { match: readMatch(objectOf(o, 'match'), path.child('match'), errs), inject: {} };
  const name = optString(o, 'name');
  if (name !== undefined) rule.name = name;
  const p = optNumber(o, 'probability');
  if (p !== undefined) {
    if (!(p >= 0 && p <= 1)) errs.push(invalid(path.child('probability'), p, 'must be between 0 and 1'));
    rule.probability = p;
  }
  const first = nonNegativeInt(o, 'first', path, 1, errs);
  if (first !== undefined) rule.first = first;
  const every = nonNegativeInt(o, 'every', path, 1, errs);
  if (every !== undefined) rule.every = every;
  const after = objectOf(o, 'after');
  if (after) {
    const requests = nonNegativeInt(after, 'requests', path.child('after'), 0, errs);
    const events = nonNegativeInt(after, 'events', path.child('after'), 1, errs);
    if (requests === undefined && events === undefined) errs.push(required(path.child('after'), 'requests or events'));
    if (requests !== undefined && events !== undefined) errs.push(forbidden(path.child('after', 'events'), 'may not be combined with after.requests'));
    rule.after = { ...(requests !== undefined ? { requests } : {}), ...(events !== undefined ? { events } : {}) };
  }
  const when = (['probability', 'first', 'every'] as const).filter((k) => rule[k] !== undefined);
  if (rule.after?.requests !== undefined) when.push('after' as never);
  if (when.length > 1) errs.push(forbidden(path.child(when[1]), `may not be combined with ${when[0]}: a rule hits by one of probability, first, every, after`));
  rule.inject = readInjection(objectOf(o, 'inject'), path.child('inject'), errs);
  const acts = verbsActedOn(rule.inject, rule.after);
  const verbs = rule.match.verbs;
  if (verbs && verbs.length > 0 && !verbs.some((v) => acts.includes(v))) {
    const why = rule.after?.events !== undefined && rule.inject.watch === undefined ? { field: path.child('after', 'events'), value: rule.after.events } : faultPath(rule.inject, path.child('inject'));
    errs.push(invalid(why.field, why.value, `acts only on ${acts.join(', ')}, and match.verbs [${verbs.join(', ')}] holds none of them: the rule could never act`));
  }
  if (rule.match.subresources && rule.match.subresources.some((s) => s !== 'status' && s !== 'scale' && s !== '')) {
    const i = rule.match.subresources.findIndex((s) => s !== 'status' && s !== 'scale' && s !== '');
    errs.push(notSupported(path.child('match', 'subresources').index(i), rule.match.subresources[i], ['', 'scale', 'status']));
  }
  return rule;
}

/** Where a rule's fault is, for the error that says it could never act. */
function faultPath(inject: FaultInjection, path: FieldPath): { field: FieldPath; value: unknown } {
  if (inject.watch !== undefined) return { field: path.child('watch'), value: inject.watch };
  if (inject.commitThenDrop) return { field: path.child('commitThenDrop'), value: true };
  return { field: path.child('staleRead'), value: inject.staleRead };
}

function readFaults(doc: JsonObject, _ctx: ReadContext, root: FieldPath): { value: FaultConfiguration; errors: FieldError[] } {
  const errs: FieldError[] = [];
  const seed = optNumber(doc, 'seed') ?? 0;
  if (!Number.isSafeInteger(seed)) errs.push(invalid(root.child('seed'), seed, 'must be an integer'));
  const rules = objectsOf(doc, 'rules').map((r, i) => readRule(r, root.child('rules').index(i), errs));
  return { value: { seed, rules }, errors: errs };
}

export const faultDocument: DocumentKind<FaultConfiguration> = {
  kind: 'FaultConfiguration',
  groupVersions: [V1ALPHA1],
  schemas: { [V1ALPHA1]: schema },
  read: readFaults,
};

/** The problems of a load, as the one line a start or a PUT is refused with. */
const oneLine = <T>(r: LoadResult<T>): { ok: true; value: T } | { ok: false; message: string } =>
  r.ok ? { ok: true, value: r.document.value } : { ok: false, message: r.problems.map((p) => p.message).join('; ') };

/** A FaultConfiguration file (`orchd serve --faults FILE`). */
export const loadFaultFile = (file: string) => {
  const r = loadDocumentFile(file, faultDocument);
  return r.ok ? { ok: true as const, value: r.document.value } : { ok: false as const, message: `${file}: ${r.problems.map((p) => p.message).join('; ')}` };
};

/** A FaultConfiguration's text (PUT /debug/faults: YAML or JSON). */
export const parseFaultText = (text: string) => oneLine(loadDocumentText('FaultConfiguration', text, faultDocument));

/**
 * The embedded API's form, `{seed, rules}` (apiVersion and kind may be left out), read exactly as
 * the file is: JSON is YAML.
 */
export const parseFaultObject = (value: { seed?: number; rules?: unknown[] } & Record<string, unknown>) =>
  oneLine(loadDocumentText('faults', JSON.stringify({ apiVersion: V1ALPHA1, kind: 'FaultConfiguration', ...value }), faultDocument));
