/**
 * The history of a running orchd, read over HTTP: the log itself from /debug/log (its entries with
 * their commit times and types, one object's versions, the version at a time: src/http/handlers/
 * debug-log.ts), and the state at a version as Exact lists of each kind (resourceVersionMatch=Exact,
 * paged), as any client reads it. So the answers are the data folder's, times included.
 */
import type { Writer } from '../../log/log.js';
import type { KubeObject } from '../../resources/types.js';
import type { KindStrategy } from '../../resources/strategy.js';
import { collectionOfKind, selects, type Change, type Filter, type History, type StateFilter, type Stored } from '../core/history.js';
import { TimeTravelError } from '../core/errors.js';

const PAGE = 500;

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
  writer?: Writer;
  object: KubeObject;
}

const refusal = async (what: string, res: Response): Promise<TimeTravelError> => {
  const text = await res.text();
  let message = text.trim();
  try {
    message = (JSON.parse(text) as StatusBody).message ?? message;
  } catch {
    // Not a Status: its text says it.
  }
  return new TimeTravelError(`${what}: ${res.status} ${message}`.trim());
};

async function get(base: string, path: string): Promise<Response>;
async function get(base: string, path: string, allowNotFound: boolean): Promise<Response | undefined>;
/** GET path; a 404 is undefined when allowed (a resource not served), else every answer but 2xx is an error. */
async function get(base: string, path: string, allowNotFound = false): Promise<Response | undefined> {
  let res: Response;
  try {
    res = await fetch(base + path, { headers: { accept: 'application/json' } });
  } catch (err) {
    throw new TimeTravelError(`--server ${base}: cannot reach it (${err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err)})`);
  }
  if (allowNotFound && res.status === 404) {
    await res.body?.cancel();
    return undefined;
  }
  if (!res.ok) throw await refusal(`GET ${path.split('?')[0]}`, res);
  return res;
}

const getJson = async <T>(base: string, path: string): Promise<T> => (await (await get(base, path)).json()) as T;

/** The JSON lines of a response, as they arrive. */
async function* lines<T>(res: Response): AsyncIterable<T> {
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
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

/** The collection path of a kind, in one namespace when given and the kind is namespaced. */
function pathOf(k: KindStrategy, namespace: string | undefined): string {
  const root = k.group === '' ? `/api/${k.versions[0]}` : `/apis/${k.group}/${k.versions[0]}`;
  return k.namespaced && namespace !== undefined ? `${root}/namespaces/${encodeURIComponent(namespace)}/${k.plural}` : `${root}/${k.plural}`;
}

const keyOf = (k: KindStrategy, o: KubeObject): string => `${collectionOfKind(k)}/${k.namespaced ? (o.metadata.namespace ?? '') : ''}/${o.metadata.name}`;

const changeOf = (l: Line): Change => ({ rv: l.rv, type: l.type, key: l.key, object: l.object, time: l.time ?? undefined, ...(l.writer ? { writer: l.writer } : {}) });

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

  /** The query that asks /debug/log for the filter's kinds and namespace (the labels are matched here). */
  private query(filter: Filter): string {
    // No collection named: every kind the server serves, the kinds of its CRDs too.
    return [...(filter.kinds ?? []).map((k) => `collection=${encodeURIComponent(collectionOfKind(k))}`), ...(filter.namespace !== undefined ? [`namespace=${encodeURIComponent(filter.namespace)}`] : [])].join('&');
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
    const sorted = [...filter.kinds].sort((a, b) => collectionOfKind(a).localeCompare(collectionOfKind(b)));
    for (const k of sorted) {
      let cont = '';
      do {
        // A continue token carries its version: Kubernetes forbids a resourceVersion beside it.
        const q = `limit=${PAGE}&${cont ? `continue=${encodeURIComponent(cont)}` : `resourceVersion=${rv}&resourceVersionMatch=Exact`}`;
        const res = await get(this.base, `${pathOf(k, filter.namespace)}?${q}`, !cont);
        if (!res) {
          // Not served now: a CRD's kind, the CRD deleted since. Its objects at rv are its log's entries up to rv.
          for (const s of await this.foldedFromLog(k, rv, filter)) out.push(s);
          break;
        }
        const list = (await res.json()) as { items: KubeObject[]; metadata: { continue?: string } };
        for (const o of list.items) {
          // A list's items carry no apiVersion and kind; the state's objects do, as stored.
          const object = { apiVersion: k.group === '' ? k.versions[0] : `${k.group}/${k.versions[0]}`, kind: k.kind, ...(o as object) } as KubeObject;
          const key = keyOf(k, object);
          if (selects(filter, key, () => object)) out.push({ key, object });
        }
        cont = list.metadata.continue ?? '';
      } while (cont);
    }
    return out;
  }

  /** The objects of kind k at rv, folded from the log's entries of its collection (as a data folder's state is near its start). */
  private async foldedFromLog(k: KindStrategy, rv: number, filter: StateFilter): Promise<Stored[]> {
    const at = new Map<string, Stored>();
    for await (const c of this.changes(Math.max(this.oldest, 1), rv, { ...filter, kinds: [k], labels: undefined })) {
      if (c.type === 'DELETED') at.delete(c.key);
      else at.set(c.key, { key: c.key, object: c.object });
    }
    return [...at.values()].filter((s) => selects(filter, s.key, () => s.object)).sort((a, b) => (a.key < b.key ? -1 : 1));
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
