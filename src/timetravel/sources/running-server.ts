/**
 * The history of a running orchd, read over HTTP: the log itself from /debug/log (its entries with
 * their commit times and types, one object's versions, the version at a time: src/http/handlers/
 * debug-log.ts), and the state at a version from /debug/log/state, written by the server from its
 * stored bytes as a data folder's state is printed. So the answers are the data folder's, times
 * and bytes included.
 */
import type { IncomingMessage } from 'node:http';
import type { Author } from '../../log/log.js';
import type { KubeObject } from '../../api/types.js';
import { collectionOfKind, selects, type Change, type Filter, type History, type StateFilter, type Stored } from '../core/history.js';
import { TimeTravelError } from '../core/errors.js';

const NEWLINE = 0x0a;
const TAB = 0x09;

interface StatusBody {
  kind?: string;
  code?: number;
  message?: string;
}

interface Head {
  oldest: number;
  head: number;
  headTime: number | null;
  timesFromLog: boolean;
}

/** A /debug/log entry. */
interface Line {
  rv: number;
  type: Change['type'];
  key: string;
  time: number | null;
  writer?: Author;
  object: KubeObject;
}

/**
 * One answer of the server: its status and its body as it arrives. node:http rather than fetch: the
 * command is short, and loading fetch's HTTP client (undici) cost it more CPU than its reads.
 */
class Answer {
  constructor(readonly res: IncomingMessage) {}

  get status(): number {
    return this.res.statusCode ?? 0;
  }

  /** The body's chunks as they arrive; stopping early closes the connection. */
  get body(): AsyncIterable<Buffer> {
    return this.res;
  }

  async text(): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const c of this.res) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  async json<T>(): Promise<T> {
    return JSON.parse(await this.text()) as T;
  }

  cancel(): void {
    this.res.destroy();
  }
}

const refusal = async (what: string, res: Answer): Promise<TimeTravelError> => {
  const text = await res.text();
  let message = text.trim();
  try {
    message = (JSON.parse(text) as StatusBody).message ?? message;
  } catch {
    // Not a Status: its text says it.
  }
  return new TimeTravelError(`${what}: ${res.status} ${message}`.trim());
};

/** GET of url, accepting JSON, over node:http or node:https as the URL says. */
async function request(url: string): Promise<Answer> {
  const client = url.startsWith('https:') ? await import('node:https') : await import('node:http');
  return new Promise((resolve, reject) => {
    const req = client.get(url, { headers: { accept: 'application/json' } }, (res) => resolve(new Answer(res)));
    req.on('error', reject);
  });
}

async function get(base: string, path: string): Promise<Answer>;
async function get(base: string, path: string, allowNotFound: boolean): Promise<Answer | undefined>;
/** GET path; a 404 is undefined when allowed (a resource not served), else every answer but 2xx is an error. */
async function get(base: string, path: string, allowNotFound = false): Promise<Answer | undefined> {
  let res: Answer;
  try {
    res = await request(base + path);
  } catch (err) {
    throw new TimeTravelError(`--server ${base}: cannot reach it (${err instanceof Error ? err.message : String(err)})`);
  }
  if (allowNotFound && res.status === 404) {
    res.cancel();
    return undefined;
  }
  if (res.status < 200 || res.status > 299) throw await refusal(`GET ${path.split('?')[0]}`, res);
  return res;
}

const getJson = async <T>(base: string, path: string): Promise<T> => (await get(base, path)).json<T>();

/** The JSON lines of a response, as they arrive. */
async function* lines<T>(res: Answer): AsyncIterable<T> {
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of res.body) {
    const parts = (rest + decoder.decode(chunk, { stream: true })).split('\n');
    rest = parts.pop()!;
    for (const p of parts) if (p !== '') yield JSON.parse(p) as T;
  }
  if (rest.trim() !== '') yield JSON.parse(rest) as T;
}

export async function openServer(url: string): Promise<History> {
  const base = url.replace(/\/+$/, '');
  return new ServerHistory(base, await getJson<Head>(base, '/debug/log/head'));
}

const changeOf = (l: Line): Change => ({ rv: l.rv, type: l.type, key: l.key, object: l.object, time: l.time ?? undefined, ...(l.writer ? { writer: l.writer } : {}) });

/** An object as /debug/log/state sent it: its JSON, parsed when read. */
class ServedObject implements Stored {
  private parsed: KubeObject | undefined;

  constructor(
    readonly key: string,
    private readonly bytes: Buffer,
  ) {}

  get object(): KubeObject {
    return (this.parsed ??= JSON.parse(this.bytes.toString('utf8')) as KubeObject);
  }

  json(): Buffer {
    return this.bytes;
  }
}

class ServerHistory implements History {
  readonly oldest: number;
  readonly head: number;
  private readonly headTime: number | undefined;
  readonly timesFromLog: boolean;

  constructor(
    private readonly base: string,
    head: Head,
  ) {
    this.oldest = head.oldest;
    this.head = head.head;
    this.headTime = head.headTime ?? undefined;
    this.timesFromLog = head.timesFromLog;
  }

  /** The query that asks /debug/log for the filter's kinds, namespace, name and event types (the labels are matched here). */
  private query(filter: Filter): string {
    // No collection named: every kind the server serves, the kinds of its CRDs too.
    return [
      ...(filter.kinds ?? []).map((k) => `collection=${encodeURIComponent(collectionOfKind(k))}`),
      ...(filter.namespace !== undefined ? [`namespace=${encodeURIComponent(filter.namespace)}`] : []),
      // Sent only the entries asked for: one object's, or of some event types, out of a long log.
      ...(filter.name !== undefined ? [`name=${encodeURIComponent(filter.name)}`] : []),
      ...(filter.types ?? []).map((t) => `type=${t}`),
    ].join('&');
  }

  async *changes(from: number, to: number, filter: Filter): AsyncIterable<Change> {
    yield* this.entries(`/debug/log?from=${from}&to=${to}&${this.query(filter)}`, filter);
  }

  /** Every change after `after`, as it is committed, until the caller stops. */
  follow(after: number, filter: Filter): AsyncIterable<Change> {
    return this.entries(`/debug/log?from=${after + 1}&follow=true&${this.query(filter)}`, filter);
  }

  private async *entries(path: string, filter: Filter): AsyncIterable<Change> {
    const res = await get(this.base, path);
    for await (const l of lines<Line>(res)) if (selects(filter, l.key, () => l.object)) yield changeOf(l);
  }

  async stateAt(rv: number, filter: StateFilter): Promise<Stored[]> {
    const out: Stored[] = [];
    for await (const page of this.statePages(rv, filter)) for (const s of page) out.push(s);
    return out;
  }

  /**
   * The objects at rv as the server writes them from its stored bytes (/debug/log/state), a page
   * per chunk received: their JSON is printed as it came, and parsed only where something reads an
   * object (a label selector, YAML, a table).
   */
  async *statePages(rv: number, filter: StateFilter): AsyncIterable<Stored[]> {
    const kinds = [...filter.kinds].map(collectionOfKind).sort();
    const query = [
      `at=${rv}`,
      ...kinds.map((c) => `collection=${encodeURIComponent(c)}`),
      ...(filter.namespace !== undefined ? [`namespace=${encodeURIComponent(filter.namespace)}`] : []),
      ...(filter.managedFields === false ? ['managedFields=false'] : []),
    ].join('&');
    // No kind asked for is no kind, not every kind (which the endpoint reads without ?collection=).
    if (kinds.length === 0) return;
    const res = await get(this.base, `/debug/log/state?${query}`);
    let rest: Buffer | undefined;
    for await (const chunk of res.body) {
      const bytes = rest ? Buffer.concat([rest, chunk]) : chunk;
      const page: Stored[] = [];
      let start = 0;
      for (let nl = bytes.indexOf(NEWLINE); nl >= 0; start = nl + 1, nl = bytes.indexOf(NEWLINE, start)) {
        const tab = bytes.indexOf(TAB, start);
        const s = new ServedObject(bytes.toString('utf8', start, tab), bytes.subarray(tab + 1, nl));
        if (selects(filter, s.key, () => s.object)) page.push(s);
      }
      rest = start < bytes.length ? bytes.subarray(start) : undefined;
      if (page.length > 0) yield page;
    }
    if (rest) throw new TimeTravelError(`GET /debug/log/state: the answer ended inside a line`);
  }

  async versionsOf(key: string): Promise<Change[]> {
    const res = await get(this.base, `/debug/log/versions?key=${encodeURIComponent(key)}`);
    const out: Change[] = [];
    for await (const l of lines<Line>(res)) out.push(changeOf(l));
    return out;
  }

  async versionAt(timeMs: number): Promise<number> {
    return (await getJson<{ rv: number }>(this.base, `/debug/log/at?time=${Math.floor(timeMs)}`)).rv;
  }

  async timeOf(rv: number): Promise<number | undefined> {
    if (rv === this.head) return this.headTime;
    for await (const c of this.entries(`/debug/log?from=${rv}&to=${rv}`, {})) return c.time;
    return undefined;
  }

  async close(): Promise<void> {}
}
