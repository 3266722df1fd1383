import type { ServerResponse } from 'node:http';
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
