import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeBody, MAX_BODY_BYTES, MAX_YAML_DEPTH, OBJECT_MEDIA_TYPES, PATCH_MEDIA_TYPES, readBody, type DecodeOptions } from '../../../src/http/codec/body.js';
import { ApiError } from '../../../src/http/respond/status.js';
import { sleep } from '../../helpers/poll.js';

/** A request body as a stream with headers: all readBody looks at. */
function request(body: Iterable<Buffer> | AsyncIterable<Buffer>, headers: Record<string, string> = {}): IncomingMessage {
  return Object.assign(Readable.from(body, { objectMode: false }), { headers }) as unknown as IncomingMessage;
}

async function failure(p: Promise<unknown>): Promise<{ code?: number; reason?: string; message: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return { code: err.code, reason: err.status.reason, message: err.message };
    return { message: (err as Error).message };
  }
  throw new Error('expected a failure');
}

const bytes = (n: number, fill = 'a') => Buffer.alloc(n, fill);

describe('readBody', () => {
  it('concatenates the chunks', async () => {
    expect((await readBody(request([Buffer.from('{"a":'), Buffer.from('1}')]))).toString()).toBe('{"a":1}');
  });
  it('reads an empty body as zero bytes', async () => {
    expect(await readBody(request([]))).toEqual(Buffer.alloc(0));
  });
  it('takes a body of exactly the limit', async () => {
    expect((await readBody(request([bytes(600), bytes(400)]), 1000)).length).toBe(1000);
  });
  it('defaults to the 3 MiB limit of kube-apiserver', async () => {
    expect(MAX_BODY_BYTES).toBe(3 * 1024 * 1024);
    expect(await failure(readBody(request([bytes(MAX_BODY_BYTES), bytes(1)])))).toMatchObject({ code: 413 });
  });
  it('answers 413 RequestEntityTooLarge one byte past the limit', async () => {
    expect(await failure(readBody(request([bytes(600), bytes(401)]), 1000))).toEqual({ code: 413, reason: 'RequestEntityTooLarge', message: 'Request entity too large: limit is 1000' });
  });
  it('answers 413 from Content-Length alone, reading nothing', async () => {
    let pulled = false;
    const body = (function* () {
      pulled = true;
      yield bytes(10);
    })();
    expect(await failure(readBody(request(body, { 'content-length': '5000' }), 1000))).toMatchObject({ code: 413 });
    expect(pulled).toBe(false);
  });
  it('stops reading an endless body soon after the limit', async () => {
    let pulled = 0;
    const body = (function* () {
      for (;;) {
        pulled++;
        yield bytes(1024);
      }
    })();
    expect(await failure(readBody(request(body), 10 * 1024))).toMatchObject({ code: 413 });
    const seen = pulled;
    await sleep(20);
    expect(seen).toBeLessThan(40);
    expect(pulled).toBe(seen);
  });
  it('inflates a gzip body', async () => {
    expect((await readBody(request([gzipSync('{"a":1}')], { 'content-encoding': 'gzip' }))).toString()).toBe('{"a":1}');
  });
  it('takes the x-gzip alias and any casing', async () => {
    expect((await readBody(request([gzipSync('x')], { 'content-encoding': ' X-GZIP ' }))).toString()).toBe('x');
  });
  it('reads an identity body as it is', async () => {
    expect((await readBody(request([Buffer.from('x')], { 'content-encoding': 'identity' }))).toString()).toBe('x');
  });
  it('applies the limit to the inflated size (a gzip bomb stops at the limit)', async () => {
    const bomb = gzipSync(Buffer.alloc(5 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(10 * 1024);
    expect(await failure(readBody(request([bomb], { 'content-encoding': 'gzip' }), 64 * 1024))).toMatchObject({ code: 413 });
  });
  it('applies the limit to the compressed bytes too', async () => {
    expect(await failure(readBody(request([bytes(2000)], { 'content-encoding': 'gzip' }), 1000))).toMatchObject({ code: 413 });
  });
  it('answers 400 for a body that is not gzip', async () => {
    expect(await failure(readBody(request([Buffer.from('{"a":1}')], { 'content-encoding': 'gzip' })))).toMatchObject({ code: 400, reason: 'BadRequest' });
  });
  it('answers 415 for a content coding it does not know', async () => {
    const f = await failure(readBody(request([Buffer.from('x')], { 'content-encoding': 'br' })));
    expect(f).toMatchObject({ code: 415, reason: 'UnsupportedMediaType' });
    expect(f.message).toContain('gzip, identity');
  });
  it('rejects a body that ends before it is complete', async () => {
    const stream = new Readable({ read() {} });
    const req = Object.assign(stream, { headers: {} }) as unknown as IncomingMessage;
    const p = readBody(req);
    stream.push(Buffer.from('{"a"'));
    stream.destroy();
    expect(await failure(p)).toMatchObject({ code: 400 });
  });
});

const body = (text: string) => Buffer.from(text);
const objects = { accept: OBJECT_MEDIA_TYPES };
const patches = { accept: PATCH_MEDIA_TYPES };

function decodeFailure(text: string, contentType: string | undefined, opts: DecodeOptions): { code: number; reason?: string; message: string } {
  try {
    decodeBody(body(text), contentType, opts);
  } catch (err) {
    if (err instanceof ApiError) return { code: err.code, reason: err.status.reason, message: err.message };
    throw err;
  }
  throw new Error('expected a failure');
}

describe('decodeBody picks the decoder by media type', () => {
  const cases: [string, string | undefined, DecodeOptions, string, unknown, string][] = [
    ['application/json', 'application/json', objects, '{"a":1}', { a: 1 }, 'application/json'],
    ['parameters such as charset are ignored', 'application/json; charset=utf-8', objects, '{"a":1}', { a: 1 }, 'application/json'],
    ['media types are case-insensitive', 'Application/JSON', objects, '{"a":1}', { a: 1 }, 'application/json'],
    ['no Content-Type means JSON, as in Kubernetes', undefined, objects, '{"a":1}', { a: 1 }, 'application/json'],
    ['application/yaml', 'application/yaml', objects, 'a: 1\nb: [x, "y"]\n', { a: 1, b: ['x', 'y'] }, 'application/yaml'],
    ['a merge patch is JSON', 'application/merge-patch+json', patches, '{"metadata":{"labels":{"a":null}}}', { metadata: { labels: { a: null } } }, 'application/merge-patch+json'],
    ['a JSON patch may be an array', 'application/json-patch+json', patches, '[{"op":"remove","path":"/a"}]', [{ op: 'remove', path: '/a' }], 'application/json-patch+json'],
    ['a strategic merge patch is JSON', 'application/strategic-merge-patch+json', patches, '{"a":1}', { a: 1 }, 'application/strategic-merge-patch+json'],
    ['an apply patch may be JSON (what kubectl sends)', 'application/apply-patch+yaml', patches, '{"kind":"X"}', { kind: 'X' }, 'application/apply-patch+yaml'],
    ['an apply patch may be YAML', 'application/apply-patch+yaml', patches, 'kind: X\n', { kind: 'X' }, 'application/apply-patch+yaml'],
    ['YAML that opens like JSON falls back to YAML', 'application/yaml', objects, '{a: 1, b: [c]}', { a: 1, b: ['c'] }, 'application/yaml'],
    ['UTF-8 text', 'application/json', objects, '{"note":"é ☃"}', { note: 'é ☃' }, 'application/json'],
  ];
  it.each(cases)('%s', (_name, contentType, opts, text, value, mediaType) => {
    expect(decodeBody(body(text), contentType, opts)).toEqual({ value, duplicates: [], mediaType });
  });

  const refused: [string, string | undefined, DecodeOptions][] = [
    ['text/plain', 'text/plain', objects],
    ['protobuf on a patch', 'application/vnd.kubernetes.protobuf', patches],
    ['a patch type on create', 'application/merge-patch+json', objects],
    ['plain JSON on a patch', 'application/json', patches],
    ['no Content-Type on a patch', undefined, patches],
    ['apply-patch+json, which Kubernetes does not serve', 'application/apply-patch+json', patches],
    ['a wildcard', '*/*', objects],
  ];
  it.each(refused)('415 for %s', (_name, contentType, opts) => {
    const f = decodeFailure('{}', contentType, opts);
    expect(f).toMatchObject({ code: 415, reason: 'UnsupportedMediaType' });
    expect(f.message).toContain(`accepted media types include: ${opts.accept.join(', ')}`);
  });
});

describe('decodeBody and empty bodies', () => {
  const empties: [string, string, string][] = [
    ['no bytes', 'application/json', ''],
    ['only whitespace', 'application/json', ' \r\n\t'],
    ['no YAML document', 'application/yaml', ''],
    ['only a YAML comment', 'application/yaml', '# nothing here\n'],
  ];
  it.each(empties)('%s is a 400 where a body is required', (_name, contentType, text) => {
    expect(decodeFailure(text, contentType, objects)).toMatchObject({ code: 400, reason: 'BadRequest', message: expect.stringContaining('empty') });
  });
  it.each(empties)('%s decodes to undefined where the body is optional', (_name, contentType, text) => {
    expect(decodeBody(body(text), contentType, { accept: OBJECT_MEDIA_TYPES, required: false })).toBeUndefined();
  });
  it('an absent optional body is not held to the media types (python sends a Content-Type on body-less DELETEs)', () => {
    expect(decodeBody(body(''), 'text/plain', { accept: OBJECT_MEDIA_TYPES, required: false })).toBeUndefined();
  });
  it('an optional body that is there is held to the media types', () => {
    expect(decodeFailure(' ', 'text/plain', { accept: OBJECT_MEDIA_TYPES, required: false })).toMatchObject({ code: 415 });
  });
  it('a JSON null is a body, not an absent one', () => {
    expect(decodeBody(body('null'), 'application/json', { accept: OBJECT_MEDIA_TYPES, required: false })).toEqual({ value: null, duplicates: [], mediaType: 'application/json' });
  });
});

describe('decodeBody and malformed bodies', () => {
  const cases: [string, string, string, string][] = [
    ['JSON, with the Go wording and where', 'application/json', '{\n  "a": 1,\n}', "json parse error: invalid character '}' looking for beginning of object key string (line 3, column 1)"],
    ['truncated JSON', 'application/json', '{"a":', 'json parse error: unexpected end of JSON input (line 1, column 6)'],
    ['YAML', 'application/yaml', 'a: b: c\n', 'yaml parse error: Nested mappings are not allowed in compact mappings (line 1, column 4)'],
    ['YAML under an apply patch', 'application/apply-patch+yaml', 'a: [1, 2\n', 'yaml parse error:'],
    ['JSON that is not YAML either', 'application/yaml', '{"a": 1,,}', 'yaml parse error:'],
    ['two YAML documents', 'application/yaml', 'a: 1\n---\nb: 2\n', 'yaml parse error: the body holds 2 YAML documents; send one'],
    ['a collection as a YAML key', 'application/yaml', '? [a]\n: b\n', 'yaml parse error: a mapping key under the root is a collection'],
    ['YAML infinity', 'application/yaml', 'a:\n  b: .inf\n', 'yaml parse error: Infinity at a.b cannot be represented in JSON'],
    ['YAML not-a-number', 'application/yaml', 'a: .nan\n', 'yaml parse error: NaN at a cannot be represented in JSON'],
    ['an alias to no anchor', 'application/yaml', 'a: *x\n', 'yaml parse error:'],
  ];
  it.each(cases)('%s: 400 BadRequest naming the problem', (_name, contentType, text, message) => {
    const accept: DecodeOptions = { accept: [...OBJECT_MEDIA_TYPES, ...PATCH_MEDIA_TYPES] };
    const f = decodeFailure(text, contentType, accept);
    expect(f).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(f.message.startsWith(message)).toBe(true);
  });
});

describe('decodeBody reports duplicates the same way for JSON and YAML', () => {
  const cases: [string, string, string, unknown, string[]][] = [
    ['JSON', 'application/json', '{"metadata":{"name":"a","name":"b"}}', { metadata: { name: 'b' } }, ['duplicate field "metadata.name"']],
    ['YAML block mapping', 'application/yaml', 'metadata:\n  name: a\n  name: b\n', { metadata: { name: 'b' } }, ['duplicate field "metadata.name"']],
    [
      'YAML list item',
      'application/yaml',
      'spec:\n  validations:\n  - expression: a\n    expression: b\n',
      { spec: { validations: [{ expression: 'b' }] } },
      ['duplicate field "spec.validations[0].expression"'],
    ],
    ['YAML flow mapping', 'application/yaml', '{a: 1, a: 2}', { a: 2 }, ['duplicate field "a"']],
    ['JSON under apply-patch+yaml', 'application/apply-patch+yaml', '{"a":{"b":1,"b":2}}', { a: { b: 2 } }, ['duplicate field "a.b"']],
    ['YAML keys that are equal as JSON keys', 'application/yaml', '1: a\n"1": b\n', { 1: 'b' }, ['duplicate field "1"']],
  ];
  it.each(cases)('%s', (_name, contentType, text, value, duplicates) => {
    const got = decodeBody(body(text), contentType, { accept: [...OBJECT_MEDIA_TYPES, ...PATCH_MEDIA_TYPES] });
    expect(got.value).toEqual(value);
    expect(got.duplicates).toEqual(duplicates);
  });
});

describe('decodeBody turns YAML into JSON values (YAML 1.2 core schema)', () => {
  const cases: [string, string, unknown][] = [
    ['integers, floats, hex and octal are numbers', 'a: 10\nb: 1.5\nc: 0x1F\nd: 0o17\ne: 1e3\n', { a: 10, b: 1.5, c: 31, d: 15, e: 1000 }],
    ['true/false are booleans, and YAML 1.1 words stay strings', 'a: true\nb: False\nc: yes\nd: off\n', { a: true, b: false, c: 'yes', d: 'off' }],
    ['a %YAML 1.1 directive does not bring the 1.1 words back', '%YAML 1.1\n---\nc: yes\n', { c: 'yes' }],
    ['null, ~ and an empty value are null', 'a: null\nb: ~\nc:\n', { a: null, b: null, c: null }],
    ['dates stay strings', 'a: 2001-12-14\nb: !!timestamp 2001-12-14t21:59:43.10-05:00\n', { a: '2001-12-14', b: '2001-12-14t21:59:43.10-05:00' }],
    ['explicit binary stays its text', 'a: !!binary aGVsbG8=\n', { a: 'aGVsbG8=' }],
    ['a huge integer is a number, as in JSON', 'a: 12345678901234567890\n', { a: 12345678901234567890 }],
    ['scalar keys become strings', '1: a\ntrue: b\nnull: c\n1.5: d\n', { 1: 'a', true: 'b', null: 'c', '1.5': 'd' }],
    ['merge keys are plain keys', 'a: &x {b: 1}\nc:\n  <<: *x\n', { a: { b: 1 }, c: { '<<': { b: 1 } } }],
    ['a block scalar is a string', 'a: |\n  line 1\n  line 2\n', { a: 'line 1\nline 2\n' }],
    ['a stray document marker is not a second document', '---\na: 1\n---\n', { a: 1 }],
  ];
  it.each(cases)('%s', (_name, text, value) => {
    expect(decodeBody(body(text), 'application/yaml', objects).value).toEqual(value);
  });

  it('copies aliases instead of sharing one object', () => {
    const { value } = decodeBody(body('a: &x {b: 1}\nc: *x\n'), 'application/yaml', objects) as { value: { a: object; c: object } };
    expect(value.c).toEqual(value.a);
    expect(value.c).not.toBe(value.a);
  });
  it('resolves an alias to the latest anchor written before it', () => {
    const text = 'a: &x 1\nb: &y [&x 2]\nc: &x 3\nd: *y\ne: *x\n';
    expect(decodeBody(body(text), 'application/yaml', objects).value).toEqual({ a: 1, b: [2], c: 3, d: [2], e: 3 });
  });
  it('stores a "__proto__" key as an own property', () => {
    const { value } = decodeBody(body('__proto__:\n  polluted: true\n'), 'application/yaml', objects);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value as object)).toEqual(['__proto__']);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });
});

describe('decodeBody is safe on hostile YAML', () => {
  it('stops a billion-laughs document at a size proportional to its text', () => {
    const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let k = 1; k < 10; k++)
      lines.push(
        `a${k}: &a${k} [${Array(10)
          .fill(`*a${k - 1}`)
          .join(', ')}]`,
      );
    expect(decodeFailure(lines.join('\n'), 'application/yaml', objects)).toMatchObject({ code: 400, message: expect.stringContaining('too many nodes') });
  });
  it('stops an alias that contains itself', () => {
    expect(decodeFailure('a: &x [*x]\n', 'application/yaml', objects)).toMatchObject({ code: 400 });
  });
  const deep: [string, (n: number) => string][] = [
    ['block mappings', (n) => Array.from({ length: n }, (_, k) => `${' '.repeat(k)}a:`).join('\n') + ' 1\n'],
    ['block sequences', (n) => '- '.repeat(n) + 'x\n'],
    ['flow mappings', (n) => '{a: '.repeat(n) + '1' + '}'.repeat(n)],
  ];
  it.each(deep)(`reads %s ${MAX_YAML_DEPTH} deep`, (_name, make) => {
    expect(() => decodeBody(body(make(MAX_YAML_DEPTH)), 'application/yaml', objects)).not.toThrow();
  });
  it.each(deep)('refuses %s one level deeper, before the yaml package recurses', (_name, make) => {
    expect(decodeFailure(make(MAX_YAML_DEPTH + 1), 'application/yaml', objects)).toMatchObject({ code: 400, message: expect.stringContaining(`maximum depth of ${MAX_YAML_DEPTH}`) });
  });
  it('refuses depth gained through aliases', () => {
    const inner = '{a: '.repeat(150) + '1' + '}'.repeat(150);
    const text = `x: &x ${inner}\ny: ${'{a: '.repeat(100)}*x${'}'.repeat(100)}\n`;
    expect(decodeFailure(text, 'application/yaml', objects)).toMatchObject({ code: 400, message: expect.stringContaining('maximum depth') });
  });
  it('survives hostile depth repeatedly (the yaml package can abort the process after one overflow)', () => {
    for (let k = 0; k < 3; k++) expect(decodeFailure('- '.repeat(100_000) + 'x', 'application/yaml', objects)).toMatchObject({ code: 400 });
  });
});
