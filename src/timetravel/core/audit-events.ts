/**
 * The refused writes of an audit log (`orchd serve --audit-log-path`; src/http/audit-log.ts): what a
 * log of committed entries cannot show, since a refused write never reached it. `orchd log --audit
 * FILE` prints them beside the changes, in time order.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { collectionOfKind, type Change, type StateFilter } from './history.js';
import { TimeTravelError } from './errors.js';
import { managerFromUserAgent } from '../../registry/field-manager.js';

/** A write the server answered with an error: when, who, what and why. */
export interface Refused {
  refused: true;
  time: number;
  verb: string;
  user: string;
  /** The field manager the request named (fieldManager, else its User-Agent's product), as the server would have recorded it. */
  manager?: string;
  /** `<group>/<plural>/<namespace>/<name>` as far as the request named it (a create names no object). */
  key: string;
  code: number;
  reason: string;
  message: string;
}

const WRITES = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

interface AuditEvent {
  verb?: string;
  user?: { username?: string };
  requestURI?: string;
  userAgent?: string;
  objectRef?: { apiGroup?: string; resource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number; reason?: string; message?: string };
  stageTimestamp?: string;
}

/** The refused writes in the audit log file that the filter takes (kind, namespace, name; labels cannot be known), oldest first. */
export async function refusedWrites(file: string, filter: StateFilter): Promise<Refused[]> {
  const wanted = new Set(filter.kinds.map(collectionOfKind));
  const out: Refused[] = [];
  await stat(file).catch((err: NodeJS.ErrnoException) => {
    throw new TimeTravelError(`--audit ${file}: cannot read it (${err.code ?? err.message})`);
  });
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let n = 0;
  try {
    for await (const line of lines) {
      n++;
      if (line.trim() === '') continue;
      let e: AuditEvent;
      try {
        e = JSON.parse(line) as AuditEvent;
      } catch {
        throw new TimeTravelError(`--audit ${file}: line ${n} is not JSON: not an audit log`);
      }
      const code = e.responseStatus?.code ?? 0;
      const ref = e.objectRef;
      if (!ref?.resource || !WRITES.has(e.verb ?? '') || code < 400) continue;
      const collection = `${ref.apiGroup ?? ''}/${ref.resource}`;
      if (!wanted.has(collection)) continue;
      if (filter.namespace !== undefined && ref.namespace !== filter.namespace) continue;
      if (filter.name !== undefined && ref.name !== filter.name) continue;
      const time = Date.parse(e.stageTimestamp ?? '');
      const manager = managerOf(e);
      out.push({
        refused: true,
        time,
        verb: e.verb!,
        user: e.user?.username ?? '',
        ...(manager ? { manager } : {}),
        key: `${collection}/${ref.namespace ?? ''}/${ref.name ?? ''}`,
        code,
        reason: e.responseStatus?.reason ?? '',
        message: e.responseStatus?.message ?? '',
      });
    }
  } finally {
    lines.close();
  }
  return out.sort((a, b) => a.time - b.time);
}

/** The manager a refused write would have been recorded with: as the server names it (src/http/codec/field-manager.ts). */
function managerOf(e: AuditEvent): string | undefined {
  let named: string | null = null;
  try {
    named = new URL(e.requestURI ?? '', 'http://audit').searchParams.get('fieldManager');
  } catch {
    // A target that is no URL names none.
  }
  return named || managerFromUserAgent(e.userAgent) || undefined;
}

/**
 * The changes with the refused writes between them, by time: a refusal goes before the first change
 * committed after it. Refusals before `after` or from `until` on (ms) lie outside the changes asked for.
 */
export async function* withRefusals(changes: AsyncIterable<Change>, all: Refused[], after: number, until: number): AsyncIterable<Change | Refused> {
  const refused = all.filter((r) => r.time >= after && r.time < until);
  let i = 0;
  for await (const c of changes) {
    while (i < refused.length && c.time !== undefined && refused[i].time < c.time) yield refused[i++];
    yield c;
  }
  while (i < refused.length) yield refused[i++];
}
