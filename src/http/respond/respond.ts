import type { ServerResponse } from 'node:http';
import { stringify as toYaml } from 'yaml';
import { toStatus } from './errors.js';
import { JSON_TYPE } from '../../discovery/accept.js';

export { toStatus };
import { tracer } from '../../observability/spans.js';

/** How the client wants the answer rendered. */
export interface Output {
  format: 'json' | 'yaml';
  pretty: boolean;
}

export { JSON_TYPE };
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
  // A span not recorded (no tracing, or not sampled) has nothing to end: no listener for every answer.
  if (span.isRecording()) res.once('finish', () => span.end());
  // A string body would carry the headers out in its own encoding (UTF-8), re-encoding addWarnings' bytes.
  res.end(typeof text === 'string' ? Buffer.from(text) : text);
}

/**
 * Answers up to this size are joined and written at once (a page of 500 Events is 800 KB); larger
 * ones go out in chunks of about this size, each written when the connection has taken the last.
 */
const CHUNK_BYTES = 1 << 20;

/**
 * Writes one compact JSON answer made of parts (a list's header and its objects' shared encodings).
 * A large one is streamed with backpressure: a list of 100k Events is 160 MB, which one Buffer.concat
 * copied into a fresh allocation in one synchronous step, holding every other request meanwhile.
 * Pretty JSON and YAML re-encode the whole answer anyway and go through send.
 */
export async function sendParts(res: ServerResponse, code: number, parts: readonly Buffer[], out: Output): Promise<void> {
  let size = 0;
  for (const p of parts) size += p.length;
  if (out.format !== 'json' || out.pretty) return send(res, code, undefined, out, Buffer.concat(parts, size));
  if (size <= CHUNK_BYTES) return sendJoined(res, code, parts, size);
  const span = tracer().startSpan('response.write', { attributes: { 'http.response.status_code': code } });
  res.statusCode = code;
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', size);
  span.setAttribute('http.response.body.size', size);
  if (span.isRecording()) res.once('finish', () => span.end());
  for (let from = 0; from < parts.length;) {
    let bytes = 0;
    let to = from;
    while (to < parts.length && bytes < CHUNK_BYTES) bytes += parts[to++].length;
    const full = !res.write(to === from + 1 ? parts[from] : Buffer.concat(parts.slice(from, to), bytes));
    from = to;
    if (full && !(await drained(res))) return;
  }
  res.end();
}

/**
 * Buffers a joined answer is copied into, reused once the answer is written. A page of 500 Events
 * joined into a fresh 800 KB buffer each time was an allocation the kernel had to fault in page by
 * page, and memory outside the heap that made the garbage collector run more often.
 */
const joinBuffers: Buffer[] = [];
const JOIN_BUFFERS_KEPT = 8;

function sendJoined(res: ServerResponse, code: number, parts: readonly Buffer[], size: number): void {
  const buf = joinBuffers.pop() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES);
  let at = 0;
  for (const p of parts) at += p.copy(buf, at);
  // Back to the pool once the connection has taken the bytes ('finish'); an answer cut short
  // ('close' first) may still be referenced by the socket, so its buffer is left to the collector.
  res.once('finish', () => {
    if (joinBuffers.length < JOIN_BUFFERS_KEPT) joinBuffers.push(buf);
  });
  send(res, code, undefined, { format: 'json', pretty: false }, buf.subarray(0, size));
}

/** Resolves true once res can take more, false when its connection closed first. */
function drained(res: ServerResponse): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onDrain = () => done(true);
    const onClose = () => done(false);
    const done = (ok: boolean) => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
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

/**
 * Kubernetes' warning header: `299 - "<text>"`, one header per warning, the text quoted as
 * kube-apiserver quotes it (only `"` and `\` escaped) and sent as raw UTF-8 bytes, as it sends it.
 * Node writes header strings as Latin-1 (send() always writes a Buffer body so that it does), and
 * refuses a character above U+00FF: the text is handed over as its UTF-8 bytes read as Latin-1.
 */
export function addWarnings(res: ServerResponse, warnings: readonly string[]): void {
  if (warnings.length === 0) return;
  const prev = res.getHeader('Warning');
  const list = prev === undefined ? [] : Array.isArray(prev) ? prev.map(String) : [String(prev)];
  for (const w of warnings) {
    const quoted = '"' + w.replace(/[\r\n]+/g, ' ').replace(/["\\]/g, '\\$&') + '"';
    list.push(Buffer.from(`299 - ${quoted}`, 'utf8').toString('latin1'));
  }
  res.setHeader('Warning', list);
}
