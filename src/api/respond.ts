import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify as toYaml } from 'yaml';
import { CorruptEntryError } from '../log/encryption/index.js';
import { ApiError, corruptObject, internalError, type Status } from './status.js';
import { tracer } from '../tracing/spans.js';

/** How the client wants the answer rendered. */
export interface Output {
  format: 'json' | 'yaml';
  pretty: boolean;
}

export const JSON_TYPE = 'application/json';
export const YAML_TYPE = 'application/yaml';

/**
 * Writes one answer. `json` is the pre-encoded JSON of body when the caller has it (a stored
 * object's shared encoding): compact JSON answers then cost no serialization at all.
 */
export function send(res: ServerResponse, code: number, body: unknown, out: Output, json?: Buffer): void {
  // From encoding until the body is handed to the connection: what a large answer costs to go out.
  const span = tracer().startSpan('response.write', { attributes: { 'http.response.status_code': code } });
  let text: string | Buffer;
  let type: string;
  if (out.format === 'yaml') {
    text = toYaml(json !== undefined ? JSON.parse(json.toString()) : body, { lineWidth: 0 });
    type = YAML_TYPE;
  } else if (out.pretty) {
    text = JSON.stringify(json !== undefined ? JSON.parse(json.toString()) : body, null, 2) + '\n';
    type = JSON_TYPE;
  } else {
    text = json ?? JSON.stringify(body);
    type = JSON_TYPE;
  }
  res.statusCode = code;
  res.setHeader('Content-Type', type);
  const size = Buffer.byteLength(text);
  res.setHeader('Content-Length', size);
  span.setAttribute('http.response.body.size', size);
  // 'finish' comes before 'close', where the request's span ends: the child ends inside its parent.
  res.once('finish', () => span.end());
  res.end(text);
}

/** A streamed answer goes out in chunks of about this size (each the concatenation of some parts). */
const CHUNK_BYTES = 64 * 1024;

/**
 * Writes one compact JSON answer made of parts (a list's header and its objects' shared encodings)
 * as a stream with backpressure: a list of 100k Events is 160 MB, which one Buffer.concat copied
 * into a fresh allocation in one synchronous step, holding every other request meanwhile. Pretty
 * JSON and YAML re-encode the whole answer anyway and go through send.
 */
export async function sendParts(res: ServerResponse, code: number, parts: readonly Buffer[], out: Output): Promise<void> {
  if (out.format !== 'json' || out.pretty) return send(res, code, undefined, out, Buffer.concat(parts));
  const span = tracer().startSpan('response.write', { attributes: { 'http.response.status_code': code } });
  let size = 0;
  for (const p of parts) size += p.length;
  res.statusCode = code;
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', size);
  span.setAttribute('http.response.body.size', size);
  res.once('finish', () => span.end());
  await pipeline(Readable.from(chunks(parts), { objectMode: false }), res);
}

function* chunks(parts: readonly Buffer[]): Generator<Buffer> {
  let from = 0;
  let bytes = 0;
  for (let i = 0; i < parts.length; i++) {
    bytes += parts[i].length;
    if (bytes < CHUNK_BYTES && i < parts.length - 1) continue;
    yield i === from ? parts[i] : Buffer.concat(parts.slice(from, i + 1), bytes);
    from = i + 1;
    bytes = 0;
  }
}

/** Any thrown value as a Status answer; unknown errors become 500 without leaking internals. */
export function toStatus(err: unknown): Status {
  if (err instanceof ApiError) return err.status;
  if (err instanceof CorruptEntryError) return corruptObject(err.key, err.seq, err.why).status;
  return internalError(err instanceof Error ? err.message : String(err)).status;
}

export function sendError(res: ServerResponse, err: unknown, out: Output): number {
  const status = toStatus(err);
  if (res.headersSent) {
    res.destroy();
    return status.code;
  }
  if (status.details?.retryAfterSeconds) res.setHeader('Retry-After', String(status.details.retryAfterSeconds));
  send(res, status.code, status, out);
  return status.code;
}

/** Kubernetes' warning header: `299 - "<text>"`, one header per warning. */
export function addWarnings(res: ServerResponse, warnings: readonly string[]): void {
  if (warnings.length === 0) return;
  const prev = res.getHeader('Warning');
  const list = prev === undefined ? [] : Array.isArray(prev) ? prev.map(String) : [String(prev)];
  for (const w of warnings) list.push(`299 - ${JSON.stringify(w.replace(/[\r\n]+/g, ' '))}`);
  res.setHeader('Warning', list);
}
