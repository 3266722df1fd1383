/**
 * Media types in and out (JSON, YAML), pretty printing, and bodies that are too big, malformed,
 * mistyped or too deep: each gets a clear 4xx Status and the server keeps serving.
 */
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { call, serverForFile } from '../helpers/server.js';
import { kindCase, unique } from './support.js';

const file = serverForFile();

const vap = kindCase('ValidatingAdmissionPolicy');
const event = kindCase('Event');
const JSON_TYPE = /^application\/json\b/;

describe('JSON and YAML', () => {
  it('takes a YAML body and answers JSON by default', async () => {
    const name = unique('yaml-in');
    const r = await call(file.base, 'POST', vap.collection(), toYaml(vap.make(name)), { 'Content-Type': 'application/yaml' });
    expect(r.status, r.text).toBe(201);
    expect(r.headers.get('content-type')).toMatch(JSON_TYPE);
    expect(r.body.metadata.name).toBe(name);
    expect(r.body.spec.validations).toEqual(vap.make(name).spec.validations);
  });

  it('answers YAML for Accept: application/yaml, on reads, writes and lists', async () => {
    const name = unique('yaml-out');
    const created = await call(file.base, 'POST', event.collection('default'), event.make(name), { Accept: 'application/yaml' });
    expect(created.status).toBe(201);
    expect(created.headers.get('content-type')).toMatch(/^application\/yaml\b/);
    const obj = parseYaml(created.text);
    expect(obj.kind).toBe('Event');
    expect(obj.metadata.name).toBe(name);
    expect(obj.note).toBe(event.make(name).note);
    const got = await call(file.base, 'GET', event.item(name), undefined, { Accept: 'application/yaml' });
    expect(parseYaml(got.text)).toEqual(obj);
    const list = await call(file.base, 'GET', event.collection('default'), undefined, { Accept: 'application/yaml' });
    expect(parseYaml(list.text).kind).toBe('EventList');
    // Preference by q: YAML wins over JSON here.
    const q = await call(file.base, 'GET', event.item(name), undefined, { Accept: 'application/json;q=0.5, application/yaml' });
    expect(q.headers.get('content-type')).toMatch(/^application\/yaml\b/);
  });

  it('answers JSON for Accept: */* and for a list of alternatives it can serve', async () => {
    const name = unique('star');
    await call(file.base, 'POST', vap.collection(), vap.make(name));
    for (const accept of ['*/*', 'application/*', 'application/vnd.kubernetes.protobuf, */*', 'application/json, */*']) {
      const r = await call(file.base, 'GET', vap.item(name), undefined, { Accept: accept });
      expect(r.status, accept).toBe(200);
      expect(r.headers.get('content-type'), accept).toMatch(JSON_TYPE);
      expect(r.body.metadata.name, accept).toBe(name);
    }
  });

  it('answers 406 NotAcceptable for an Accept it cannot serve, and 415 for a body type it cannot read', async () => {
    const name = unique('neg');
    await call(file.base, 'POST', vap.collection(), vap.make(name));
    for (const accept of ['text/html', 'application/vnd.kubernetes.protobuf', 'application/xml']) {
      const r = await call(file.base, 'GET', vap.item(name), undefined, { Accept: accept });
      expect(r.status, accept).toBe(406);
      expect(r.headers.get('content-type'), accept).toMatch(JSON_TYPE);
      expect(r.body, accept).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotAcceptable', code: 406 });
    }
    const other = unique('ct');
    for (const type of ['text/plain', 'application/xml']) {
      const r = await call(file.base, 'POST', vap.collection(), JSON.stringify(vap.make(other)), { 'Content-Type': type });
      expect(r.status, type).toBe(415);
      expect(r.headers.get('content-type'), type).toMatch(JSON_TYPE);
      expect(r.body, type).toMatchObject({ kind: 'Status', reason: 'UnsupportedMediaType', code: 415 });
    }
    // Protobuf is read (kubectl sends Namespaces that way); JSON text labelled protobuf is no protobuf message.
    const pb = await call(file.base, 'POST', vap.collection(), JSON.stringify(vap.make(other)), { 'Content-Type': 'application/vnd.kubernetes.protobuf' });
    expect(pb.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    expect((await call(file.base, 'GET', vap.item(other))).status).toBe(404);
  });

  it('gives every answer a JSON Content-Type: objects, lists, errors, deletes', async () => {
    const name = unique('ct');
    const replies = [
      await call(file.base, 'POST', vap.collection(), vap.make(name)),
      await call(file.base, 'GET', vap.item(name)),
      await call(file.base, 'GET', vap.collection()),
      await call(file.base, 'POST', vap.collection(), vap.make(name)),
      await call(file.base, 'POST', vap.collection(), '{"bad'),
      await call(file.base, 'DELETE', vap.item(name)),
      await call(file.base, 'GET', vap.item(name)),
    ];
    expect(replies.map((r) => r.status)).toEqual([201, 200, 200, 409, 400, 200, 404]);
    for (const r of replies) expect(r.headers.get('content-type')).toMatch(JSON_TYPE);
  });
});

describe('pretty', () => {
  it('indents for curl and browsers, and when asked; compact otherwise', async () => {
    const name = unique('pretty');
    await call(file.base, 'POST', vap.collection(), vap.make(name));
    const indented = (text: string) => text.startsWith('{\n  "kind"') || text.startsWith('{\n  "apiVersion"');
    const curl = await call(file.base, 'GET', vap.item(name), undefined, { 'User-Agent': 'curl/8.5.0' });
    expect(indented(curl.text)).toBe(true);
    const browser = await call(file.base, 'GET', vap.item(name), undefined, { 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64)' });
    expect(indented(browser.text)).toBe(true);
    const client = await call(file.base, 'GET', vap.item(name), undefined, { 'User-Agent': 'kubectl/v1.33.0 (linux/amd64)' });
    expect(client.text.includes('\n  ')).toBe(false);
    expect((await call(file.base, 'GET', vap.item(name) + '?pretty=true')).text.includes('\n  ')).toBe(true);
    expect((await call(file.base, 'GET', vap.item(name) + '?pretty=false', undefined, { 'User-Agent': 'curl/8.5.0' })).text.includes('\n  ')).toBe(false);
    // Errors are pretty for curl too, and the JSON is the same either way.
    const err = await call(file.base, 'GET', vap.item(unique('nope')), undefined, { 'User-Agent': 'curl/8.5.0' });
    expect(err.text).toContain('\n  "reason": "NotFound"');
    expect(curl.body).toEqual(client.body);
  });
});

describe('bad bodies', () => {
  it('answers 413 for a body over 3 MiB, and keeps serving', async () => {
    const name = unique('big');
    const obj = vap.make(name);
    obj.metadata.annotations = { big: 'x'.repeat(3 * 1024 * 1024 + 10) };
    let status: number | undefined;
    let body: any;
    try {
      const r = await call(file.base, 'POST', vap.collection(), obj);
      status = r.status;
      body = r.body;
    } catch (err) {
      // The server may close the connection before the client has sent everything.
      status = -1;
      body = String(err);
    }
    expect(status, String(body)).toBe(413);
    expect(body).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
    expect((await call(file.base, 'GET', vap.item(name))).status).toBe(404);
    expect((await call(file.base, 'GET', '/readyz')).status).toBe(200);
  });

  it('answers 400 for malformed JSON and YAML', async () => {
    for (const [text, type] of [
      ['{"apiVersion": ', 'application/json'],
      ['{"metadata": {"name": "x"}} trailing', 'application/json'],
      ['', 'application/json'],
      ["kind: [unclosed\n  - x: 'y", 'application/yaml'],
    ]) {
      const r = await call(file.base, 'POST', vap.collection(), text, { 'Content-Type': type });
      expect(r.status, text).toBe(400);
      expect(r.body, text).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400 });
    }
  });

  it('answers 400 for values of the wrong JSON type, naming the field', async () => {
    const name = unique('types');
    const obj = vap.make(name);
    obj.spec.failurePolicy = 5;
    const r = await call(file.base, 'POST', vap.collection(), obj);
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe('BadRequest');
    expect(r.body.message).toContain('spec.failurePolicy');
    for (const edit of [(o: any) => (o.metadata = 'x'), (o: any) => (o.spec.validations = {}), (o: any) => (o.metadata.labels = { a: 1 })]) {
      const o = vap.make(name);
      edit(o);
      const bad = await call(file.base, 'POST', vap.collection(), o);
      expect(bad.status, JSON.stringify(o).slice(0, 80)).toBe(400);
    }
    const arr = await call(file.base, 'POST', vap.collection(), [vap.make(name)]);
    expect(arr.status).toBe(400);
    expect((await call(file.base, 'GET', vap.item(name))).status).toBe(404);
  });

  it('answers 4xx for deeply nested JSON and YAML and keeps serving', async () => {
    const depth = 100_000;
    const json = '{"apiVersion":"admissionregistration.orch.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"deep"},"spec":' + '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) + '}';
    const r1 = await call(file.base, 'POST', vap.collection(), json);
    expect(r1.status).toBeGreaterThanOrEqual(400);
    expect(r1.status).toBeLessThan(500);
    expect(r1.body.kind).toBe('Status');
    const arrays = await call(file.base, 'POST', vap.collection(), '['.repeat(depth) + ']'.repeat(depth));
    expect(arrays.status).toBeGreaterThanOrEqual(400);
    expect(arrays.status).toBeLessThan(500);
    const yaml = 'spec:\n' + Array.from({ length: 2000 }, (_, i) => ' '.repeat(i + 1) + 'a:').join('\n') + ' 1\n';
    const r2 = await call(file.base, 'POST', vap.collection(), yaml, { 'Content-Type': 'application/yaml' });
    expect(r2.status).toBeGreaterThanOrEqual(400);
    expect(r2.status).toBeLessThan(500);
    const flow = await call(file.base, 'POST', vap.collection(), '['.repeat(5000) + ']'.repeat(5000), { 'Content-Type': 'application/yaml' });
    expect(flow.status).toBeGreaterThanOrEqual(400);
    expect(flow.status).toBeLessThan(500);
    // Still serving, and still writing.
    const name = unique('after-deep');
    expect((await call(file.base, 'POST', vap.collection(), vap.make(name))).status).toBe(201);
    expect((await call(file.base, 'GET', vap.item(name))).status).toBe(200);
  });
});
