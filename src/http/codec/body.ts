/**
 * Request bodies: read with a size limit, then decoded by Content-Type into JSON values, with
 * duplicate keys reported the way Kubernetes words them (`duplicate field "metadata.name"`) so that
 * fieldValidation can warn about them or reject them.
 */
import type { IncomingMessage } from 'node:http';
import { createGunzip } from 'node:zlib';
import { Composer, CST, isAlias, isMap, isNode, isScalar, isSeq, Lexer, Parser } from 'yaml';
import { FieldPath } from '../../api/field-errors.js';
import { decodeJson, DuplicateFields, JsonSyntaxError, setField, type Decoded } from './json-decode.js';
import { decodeProtobuf, loadProtobufDecoder, PROTOBUF, ProtobufBodyError } from './protobuf.js';
import { ApiError, badRequest, entityTooLarge, unsupportedMediaType } from '../respond/status.js';

/** kube-apiserver's default --max-request-body-bytes (3 MiB). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export const APPLY_PATCH = 'application/apply-patch+yaml';
/** Bodies that are whole objects: create, update, DeleteOptions (protobuf: the types protobuf.ts knows). */
export const OBJECT_MEDIA_TYPES = ['application/json', 'application/yaml', PROTOBUF] as const;
/**
 * The patch types Kubernetes 1.36 serves for JSON resources. There is no `apply-patch+json`: kubectl
 * sends its JSON under apply-patch+yaml (JSON is YAML); `apply-patch+cbor` needs a CBOR feature gate.
 */
export const PATCH_MEDIA_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', APPLY_PATCH] as const;
export type BodyMediaType = (typeof OBJECT_MEDIA_TYPES)[number] | (typeof PATCH_MEDIA_TYPES)[number];

const YAML_TYPES: ReadonlySet<string> = new Set<BodyMediaType>(['application/yaml', APPLY_PATCH]);

/**
 * Deepest YAML nesting read. The yaml package composes documents recursively with large frames:
 * measured from a fresh stack it overflows at about 560 levels of `- a:` and 940 of `{a: {…}}`, and
 * after one such overflow a later deep document can abort the whole process (a fatal out-of-memory
 * in V8's regexp compiler). So depth is counted before composing, with room to spare below the
 * overflow for the server's own frames.
 */
export const MAX_YAML_DEPTH = 200;

/**
 * The body as bytes. Rejects with 413 as soon as more than `limit` bytes arrive (or when
 * Content-Length announces more) and stops reading; the caller answers and should close the
 * connection (`Connection: close`), since the rest of the body is left unread.
 * `Content-Encoding: gzip` bodies are inflated, the limit applying to the inflated size as well.
 */
export function readBody(req: IncomingMessage, limit: number = MAX_BODY_BYTES): Promise<Buffer> {
  // A protobuf body's decoder is loaded while its bytes arrive (decodeBody is synchronous); any other
  // body is the receiving promise itself, with no Promise.all and async frame around it.
  if (!isProtobuf(req.headers['content-type'])) return receive(req, limit);
  return Promise.all([receive(req, limit), loadProtobufDecoder()]).then(([body]) => body);
}

const isProtobuf = (contentType: string | undefined): boolean => contentType?.split(';', 1)[0].trim().toLowerCase() === PROTOBUF;

function receive(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const gzip = isGzip(req.headers['content-encoding']);
    const declared = Number(req.headers['content-length']);
    if (declared > limit) return reject(entityTooLarge(limit));
    const chunks: Buffer[] = [];
    let wire = 0;
    let size = 0;
    let done = false;
    let wireEnded = false;
    const inflate = gzip ? createGunzip() : undefined;

    const finish = (err: unknown, body?: Buffer): void => {
      if (done) return;
      done = true;
      req.off('data', onWire);
      req.off('end', onWireEnd);
      req.off('error', finish);
      req.off('close', onClose);
      if (inflate) {
        req.unpipe(inflate);
        inflate.destroy();
      }
      chunks.length = 0;
      if (err === undefined) resolve(body!);
      else {
        req.pause();
        reject(err);
      }
    };
    const onWire = (chunk: Buffer): void => {
      if (!inflate) return collect(chunk);
      wire += chunk.length;
      if (wire > limit) finish(entityTooLarge(limit));
    };
    const collect = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) finish(entityTooLarge(limit));
      else chunks.push(chunk);
    };
    const onWireEnd = (): void => {
      wireEnded = true;
      if (!inflate) finish(undefined, Buffer.concat(chunks, size));
    };
    // 'close' also follows a complete body; only before 'end' does it mean the client went away.
    const onClose = (): void => {
      if (!wireEnded) finish(badRequest('the request body ended before it was complete'));
    };

    if (req.readableEnded) return finish(new Error('readBody: the request body was already read'));
    req.on('data', onWire);
    req.on('end', onWireEnd);
    req.on('error', finish);
    req.on('close', onClose);
    if (inflate) {
      inflate.on('data', collect);
      inflate.on('end', () => finish(undefined, Buffer.concat(chunks, size)));
      inflate.on('error', (err) => finish(badRequest(`the gzip-encoded request body could not be inflated: ${err.message}`)));
      req.pipe(inflate);
    }
  });
}

/** gzip (or its old alias x-gzip) or nothing; any other coding is a 415, as RFC 9110 §15.5.16 asks. */
function isGzip(header: string | undefined): boolean {
  const coding = (header ?? '').trim().toLowerCase();
  if (coding === '' || coding === 'identity') return false;
  if (coding === 'gzip' || coding === 'x-gzip') return true;
  throw unsupported(`Content-Encoding ${JSON.stringify(header)}`, ['gzip', 'identity'], 'content codings');
}

export interface DecodeOptions {
  /** The media types this call takes. A missing Content-Type means application/json, as in Kubernetes. */
  accept: readonly BodyMediaType[];
  /**
   * An empty body is a 400 unless this is false. Then an empty body decodes to undefined, and is
   * not held to `accept` either: Kubernetes only looks at the Content-Type of a DELETE that has a
   * body (python sends `Content-Type: application/json` on body-less DELETEs, others send none).
   */
  required?: boolean;
}

export interface DecodedBody extends Decoded {
  /** The request's media type, without parameters: which patch it is, for PATCH. */
  mediaType: BodyMediaType;
}

/**
 * Decodes a body by its Content-Type (parameters such as charset are ignored). JSON types go through
 * decodeJson; YAML types through the yaml package (YAML 1.2 core schema) into the same JSON values,
 * duplicates worded the same way.
 *
 *   decodeBody(buf, 'application/json; charset=utf-8', { accept: OBJECT_MEDIA_TYPES })
 *   → { value: {…}, duplicates: [], mediaType: 'application/json' }
 */
export function decodeBody(buf: Buffer, contentType: string | undefined, opts: DecodeOptions & { required?: true }): DecodedBody;
export function decodeBody(buf: Buffer, contentType: string | undefined, opts: DecodeOptions): DecodedBody | undefined;
export function decodeBody(buf: Buffer, contentType: string | undefined, opts: DecodeOptions): DecodedBody | undefined {
  const required = opts.required !== false;
  if (!required && buf.length === 0) return undefined;
  const mediaType = (contentType ? contentType.split(';', 1)[0].trim().toLowerCase() : 'application/json') as BodyMediaType;
  if (!opts.accept.includes(mediaType)) throw unsupported(contentType ?? '', opts.accept, 'media types');
  if (mediaType === PROTOBUF) return { ...protobufBody(buf, contentType ?? '', opts.accept), mediaType };
  const text = buf.toString('utf8');
  const decoded = YAML_TYPES.has(mediaType) ? decodeYamlOrJson(text) : decodeJsonBody(text);
  if (decoded !== undefined) return { ...decoded, mediaType };
  if (required) throw badRequest('the request body is empty: expected a JSON or YAML document');
  return undefined;
}

/** 415 worded exactly as Kubernetes words it, listing what this call takes (status.ts's helper names only JSON and YAML). */
function unsupported(got: string, accepted: readonly string[], what: string): ApiError {
  const status = unsupportedMediaType(got).status;
  return new ApiError({ ...status, message: `the body of the request was in an unknown format - accepted ${what} include: ${accepted.join(', ')}` });
}

function protobufBody(buf: Buffer, contentType: string, accepted: readonly string[]): Decoded {
  try {
    return decodeProtobuf(buf);
  } catch (err) {
    if (!(err instanceof ProtobufBodyError)) throw err;
    if (!err.unsupportedType) throw badRequest(err.message);
    const e = unsupported(contentType, accepted, 'media types');
    throw new ApiError({ ...e.status, message: `${e.status.message}: ${err.message}` });
  }
}

const isBlank = (text: string): boolean => /^[ \t\r\n]*$/.test(text);

function decodeJsonBody(text: string): Decoded | undefined {
  if (isBlank(text)) return undefined;
  try {
    return decodeJson(text);
  } catch (err) {
    if (err instanceof JsonSyntaxError) throw badRequest(`json parse error: ${err.reason} (${where(text, err.offset)})`);
    throw err;
  }
}

/** `line 3, column 7` of an offset, for people reading an error about a multi-line body. */
function where(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let k = text.indexOf('\n'); k !== -1 && k < offset; k = text.indexOf('\n', k + 1)) {
    line++;
    lineStart = k + 1;
  }
  return `line ${line}, column ${offset - lineStart + 1}`;
}

/**
 * YAML bodies. JSON is YAML, and kubectl sends JSON under apply-patch+yaml, so text that opens like
 * JSON is tried as JSON first (same values, far faster), falling back to YAML if it is not JSON
 * (a flow mapping such as `{a: 1}`).
 */
function decodeYamlOrJson(text: string): Decoded | undefined {
  const first = /[^ \t\r\n]/.exec(text)?.[0];
  if (first === undefined) return undefined;
  if (first === '{' || first === '[') {
    try {
      return decodeJson(text);
    } catch (err) {
      if (!(err instanceof JsonSyntaxError)) throw err;
    }
  }
  return decodeYaml(text);
}

const YAML_OPTIONS = {
  version: '1.2',
  schema: 'core',
  // Report duplicates ourselves, with paths; keep the last value like the JSON path.
  uniqueKeys: false,
  merge: false,
  // Explicit !!timestamp, !!binary, !!set… would become Dates, Buffers, Sets: leave them strings.
  resolveKnownTags: false,
  prettyErrors: false,
} as const;

function decodeYaml(text: string): Decoded | undefined {
  rejectDeepLines(text);
  const tokens = [...new Parser().parse(text)];
  checkYamlDepth(text, tokens);
  const all = [...new Composer(YAML_OPTIONS).compose(tokens)];
  const err = all.flatMap((d) => d.errors)[0];
  if (err) throw badRequest(`yaml parse error: ${err.message} (${where(text, err.pos[0])})`);
  // A stray `---` before or after the document leaves an empty one: not a second document.
  const docs = all.filter((d) => !isEmptyDocument(d.contents));
  if (docs.length === 0) return undefined;
  if (docs.length > 1) throw badRequest(`yaml parse error: the body holds ${docs.length} YAML documents; send one`);
  const conv = new YamlToJson(text.length);
  const value = conv.convert(docs[0].contents, FieldPath.root(''), 1);
  return { value, duplicates: conv.dups.messages };
}

const tooDeep = (text: string, offset: number): ApiError => badRequest(`yaml parse error: nesting exceeds the maximum depth of ${MAX_YAML_DEPTH} (${where(text, offset)})`);

/**
 * A first, cheap look with the yaml lexer (linear, several times faster than its parser, and it can
 * stop early): nesting that shows within a line, open flow collections (`[[[…`, `{a: {a: …`) plus
 * compact block entries (`- - - …`), is a lower bound on the depth. Hostile bodies are mostly that
 * shape, and the parser spends seconds on three megabytes of it; this refuses them after a few
 * hundred tokens. Depth built from indentation needs quadratic text, so the parser copes with it.
 */
function rejectDeepLines(text: string): void {
  let flow = 0;
  let compact = 0;
  let offset = 0;
  let scalarNext = false;
  for (const source of new Lexer().lex(text)) {
    const at = offset;
    offset += source.length;
    // The lexer marks scalars with a control character, then gives their text: `[` there is text.
    if (scalarNext) {
      scalarNext = false;
      continue;
    }
    switch (source) {
      case CST.SCALAR:
        scalarNext = true;
        offset -= source.length;
        break;
      case CST.DOCUMENT:
      case CST.FLOW_END:
        offset -= source.length;
        flow = 0;
        compact = 0;
        break;
      case '[':
      case '{':
        if (++flow + compact > MAX_YAML_DEPTH) throw tooDeep(text, at);
        break;
      case ']':
      case '}':
        if (flow > 0) flow--;
        break;
      case '-':
      case '?':
        if (flow === 0 && ++compact > MAX_YAML_DEPTH) throw tooDeep(text, at);
        break;
      case '\n':
      case '\r\n':
        compact = 0;
        break;
    }
  }
}

/** No content at all: the composer gives an empty document a null scalar spanning no text. */
const isEmptyDocument = (contents: unknown): boolean => contents === null || (isScalar(contents) && contents.value === null && contents.range?.[0] === contents.range?.[1]);

/** The exact depth, over the parser's CST, walked with an explicit stack, before the composer recurses into it. */
function checkYamlDepth(text: string, tokens: readonly CST.Token[]): void {
  const pending: [CST.Token, number][] = [];
  for (const token of tokens) {
    if (token.type === 'document' && token.value) pending.push([token.value, 1]);
    while (pending.length > 0) {
      const [tok, depth] = pending.pop()!;
      if (tok.type !== 'block-map' && tok.type !== 'block-seq' && tok.type !== 'flow-collection') continue;
      if (depth > MAX_YAML_DEPTH) throw tooDeep(text, tok.offset);
      for (const item of tok.items) {
        if (item.key) pending.push([item.key, depth + 1]);
        if (item.value) pending.push([item.value, depth + 1]);
      }
    }
  }
}

/**
 * A composed YAML document as JSON values. Recursion is bounded: the CST check capped the written
 * depth, and aliases (which can stack one deep structure inside another, or contain themselves)
 * are checked here again. Aliases are copied, not shared, as Kubernetes' YAML-to-JSON conversion
 * copies them, and the copies are budgeted so that a "billion laughs" document stops at a size
 * proportional to its text. Anchors are tracked during the walk (it is in document order), because
 * the yaml package's Alias.resolve searches the whole document on every call.
 */
class YamlToJson {
  readonly dups = new DuplicateFields();
  private readonly anchors = new Map<string, unknown>();
  private nodes = 0;
  private expanding = 0;
  private readonly budget: number;
  constructor(textLength: number) {
    // Without aliases a node takes at least one character of text.
    this.budget = textLength + 10_000;
  }

  convert(node: unknown, path: FieldPath, depth: number): unknown {
    if (++this.nodes > this.budget) throw badRequest('yaml parse error: the document expands to too many nodes through its aliases');
    if (isAlias(node)) {
      this.expanding++;
      const value = this.convert(this.target(node.source, path), path, depth);
      this.expanding--;
      return value;
    }
    this.note(node);
    if (isScalar(node)) return scalarValue(node.value, path);
    if (depth > MAX_YAML_DEPTH) throw badRequest(`yaml parse error: nesting exceeds the maximum depth of ${MAX_YAML_DEPTH} at ${at(path)}`);
    if (isSeq(node)) return node.items.map((item, i) => this.convert(item, path.index(i), depth + 1));
    if (isMap(node)) {
      const obj: Record<string, unknown> = {};
      for (const pair of node.items) {
        const key = this.keyOf(pair.key, path);
        const child = path.child(key);
        if (setField(obj, key, this.convert(pair.value, child, depth + 1))) this.dups.add(String(child));
      }
      return obj;
    }
    // An empty value (`a:`) is null, as in JSON.
    if (node === null || node === undefined) return null;
    throw badRequest(`yaml parse error: unsupported YAML node at ${at(path)}`);
  }

  /** Remembers an anchor where it is written; copies made for aliases do not redefine anchors. */
  private note(node: unknown): void {
    if (this.expanding === 0 && isNode(node) && node.anchor) this.anchors.set(node.anchor, node);
  }

  private target(anchor: string, path: FieldPath): unknown {
    if (!this.anchors.has(anchor)) throw badRequest(`yaml parse error: alias *${anchor} at ${at(path)} names no earlier anchor`);
    return this.anchors.get(anchor);
  }

  /** JSON keys are strings: scalar keys are written as text (`1: a` → "1"); collections cannot be keys. */
  private keyOf(key: unknown, path: FieldPath): string {
    this.note(key);
    const k = isAlias(key) ? this.target(key.source, path) : key;
    if (k === null || k === undefined) return 'null';
    if (isScalar(k)) {
      const v = scalarValue(k.value, path);
      return v === null ? 'null' : String(v);
    }
    throw badRequest(`yaml parse error: a mapping key under ${at(path)} is a collection; JSON keys must be strings`);
  }
}

const at = (path: FieldPath): string => String(path) || 'the root';

function scalarValue(v: unknown, path: FieldPath): string | number | boolean | null {
  if (typeof v === 'number') {
    if (Number.isFinite(v)) return v;
    throw badRequest(`yaml parse error: ${String(v)} at ${at(path)} cannot be represented in JSON`);
  }
  if (typeof v === 'string' || typeof v === 'boolean' || v === null) return v;
  throw badRequest(`yaml parse error: unsupported YAML value at ${at(path)}`);
}
