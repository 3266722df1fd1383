/**
 * Request paths are read as kube-apiserver reads them (issue 18): percent-decoded once, never
 * normalised, so that no path names another resource than the one it spells. Requests go over raw
 * sockets: a client library would normalise `..`, `%2E` and `//` before they reach the server.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { call, serverForFile } from '../helpers/server.js';
import { kindCase, socketCall, unique, type SocketReply } from './support.js';

const file = serverForFile();
const vap = kindCase('ValidatingAdmissionPolicy');
const event = kindCase('Event');
const VAPS = vap.collection();
const EVENTS = '/apis/events.orch.io/v1';

/** One request line and its headers, `Connection: close` so that the answer ends the connection. */
const send = (method: string, target: string, body?: string, headers: Record<string, string> = {}): Promise<SocketReply> => {
  const lines = [`${method} ${target} HTTP/1.1`, 'Host: orchd', 'Connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  if (body !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  return socketCall(file.base, `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`);
};

function expectStatus(r: SocketReply, code: number, reason: string, message?: string | RegExp): void {
  expect(r.status, r.text).toBe(code);
  expect(r.body, r.text).toMatchObject({ kind: 'Status', status: 'Failure', code, reason });
  if (message !== undefined) expect(r.body.message).toMatch(message);
}

const otherNs = unique('paths');
let policies: string[];
let events: string[];
/** Every policy and every Event of both namespaces: what none of these requests may remove. */
async function everything(): Promise<{ policies: string[]; events: string[] }> {
  const names = async (path: string) => (await call(file.base, 'GET', path)).body.items.map((o: any) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort();
  return { policies: await names(VAPS), events: await names(`${EVENTS}/events`) };
}

beforeAll(async () => {
  expect((await call(file.base, 'POST', '/api/v1/namespaces', { metadata: { name: otherNs } })).status).toBe(201);
  for (const name of ['x', 'y']) expect((await call(file.base, 'POST', VAPS, vap.make(name))).status).toBe(201);
  for (const ns of ['default', otherNs]) {
    for (const name of ['x', 'y']) expect((await call(file.base, 'POST', event.collection(ns), event.make(name))).status).toBe(201);
  }
  ({ policies, events } = await everything());
  expect(policies).toHaveLength(2);
  expect(events).toHaveLength(4);
});

describe('an empty namespace segment: every namespace for a list or watch, 400 for any other request', () => {
  const body = JSON.stringify(event.make('z'));
  it.each([
    ['DELETE', `${EVENTS}/namespaces//events`],
    ['DELETE', `${EVENTS}/namespaces//events?labelSelector=a%21%3Db`],
    ['POST', `${EVENTS}/namespaces//events`],
    ['GET', `${EVENTS}/namespaces//events/x`],
    ['PUT', `${EVENTS}/namespaces//events/x`],
    ['DELETE', `${EVENTS}/namespaces//events/x`],
  ])('%s %s: 400 Namespace parameter required, nothing deleted', async (method, target) => {
    expectStatus(await send(method, target, method === 'POST' || method === 'PUT' ? body : undefined), 400, 'BadRequest', /^Namespace parameter required\.$/);
    expect(await everything()).toEqual({ policies, events });
  });

  it('GET namespaces//events lists the Events of every namespace, as /events does', async () => {
    const r = await send('GET', `${EVENTS}/namespaces//events`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.items.map((o: any) => `${o.metadata.namespace}/${o.metadata.name}`).sort()).toEqual(events);
  });

  it.each([`${EVENTS}/namespaces//events?watch=true&timeoutSeconds=1`, `${EVENTS}/watch/namespaces//events?timeoutSeconds=1`])('GET %s watches every namespace', async (target) => {
    const r = await send('GET', target);
    expect(r.status, r.text).toBe(200);
    const added = r.text
      .split('\r\n\r\n')
      .slice(1)
      .join('')
      .split('\n')
      .filter((l) => l.includes('"ADDED"'));
    expect(
      added
        .map((l) => JSON.parse(l.slice(l.indexOf('{'))).object)
        .map((o: any) => `${o.metadata.namespace}/${o.metadata.name}`)
        .sort(),
    ).toEqual(events);
  });
});

describe('names . and .. are invalid, and a path is never normalised into another resource (item 6)', () => {
  it.each(['%2E', '%2e', '.', '..', '%2E%2E', '%2e%2E', '.%2e', '%2E.'])('DELETE, GET, PUT and PATCH of …/validatingadmissionpolicies/%s: 400 Name parameter invalid', async (seg) => {
    const name = seg.replace(/%2e/gi, '.');
    for (const method of ['DELETE', 'GET', 'PUT', 'PATCH']) {
      const r = await send(method, `${VAPS}/${seg}`, method === 'PUT' || method === 'PATCH' ? '{}' : undefined, method === 'PATCH' ? { 'Content-Type': 'application/merge-patch+json' } : {});
      expectStatus(r, 400, 'BadRequest', `Name parameter invalid: "${name}": may not be '${name}'`);
    }
    expectStatus(await send('DELETE', `${EVENTS}/namespaces/default/events/${seg}`), 400, 'BadRequest', `Name parameter invalid: "${name}"`);
    // A trailing slash is dropped, as Kubernetes drops it: `../` is still the name `..`.
    expectStatus(await send('DELETE', `${EVENTS}/namespaces/default/events/${seg}%2F`), 400, 'BadRequest', `Name parameter invalid: "${name}"`);
    expect(await everything()).toEqual({ policies, events });
  });

  it('a name with % (encoded as %25) is invalid too', async () => {
    expectStatus(await send('DELETE', `${VAPS}/a%25b`), 400, 'BadRequest', `Name parameter invalid: "a%b": may not contain '%'`);
  });

  it.each([`${VAPS}/x/..`, `${VAPS}/x/%2E%2E`, `${VAPS}/x/.`, `${VAPS}/x/../y`, `${EVENTS}/namespaces/default/events/x/..`])(
    'DELETE %s names no resource (404): not the collection',
    async (target) => {
      expectStatus(await send('DELETE', target), 404, 'NotFound');
      expect(await everything()).toEqual({ policies, events });
    },
  );

  it('a backslash is a character of a segment, not a separator', async () => {
    expectStatus(await send('DELETE', VAPS.replace(/\/validating/, '\\validating')), 404, 'NotFound');
    expectStatus(await send('DELETE', `${VAPS}\\x`), 404, 'NotFound');
    expect(await everything()).toEqual({ policies, events });
  });

  it('the object named by a well-formed path is still found, encoded or not', async () => {
    expect((await send('GET', `${VAPS}/%78`)).body.metadata.name).toBe('x');
    expect((await send('GET', `${EVENTS}/namespaces/%64efault/events/y`)).body.metadata.name).toBe('y');
  });
});

describe('unparseable paths and odd methods: a 4xx Status, never a 500 or a dropped connection (item 10)', () => {
  it.each([
    ['GET', '//', 404, 'NotFound'],
    ['GET', '///', 404, 'NotFound'],
    // WHATWG URL parsing reads //host/… as a host and a path: discovery answered, and a DELETE removed a whole collection.
    ['GET', '//orchd/apis', 404, 'NotFound'],
    ['DELETE', `//orchd${VAPS}`, 404, 'NotFound'],
    ['DELETE', `/${VAPS}`, 404, 'NotFound'],
    ['DELETE', `${VAPS.replace('/v1/', '//v1/')}`, 404, 'NotFound'],
    ['GET', `${VAPS}/%zz`, 400, 'BadRequest'],
    ['DELETE', `${VAPS}/%`, 400, 'BadRequest'],
    ['GET', `${VAPS}/%C0`, 404, 'NotFound'],
    ['GET', '*', 404, 'NotFound'],
    ['GET', `http://orchd${VAPS}/%2E`, 400, 'BadRequest'],
    ['CONNECT', 'orchd:443', 404, 'NotFound'],
    ['CONNECT', VAPS, 405, 'MethodNotAllowed'],
    ['CONNECT', `${VAPS}/x`, 405, 'MethodNotAllowed'],
    ['PROPFIND', VAPS, 405, 'MethodNotAllowed'],
    // Methods the HTTP parser does not know, and targets it refuses, are refused before routing.
    ['FOO', VAPS, 400, 'BadRequest'],
    ['DELETE', 'orchd:443', 400, 'BadRequest'],
    ['GET', `${VAPS}/\x01`, 400, 'BadRequest'],
  ])('%s %s: %i %s', async (method, target, code, reason) => {
    expectStatus(await send(method, target), code, reason);
    expect(await everything()).toEqual({ policies, events });
  });

  it('an overlong target: 431 with a Status', async () => {
    expectStatus(await send('DELETE', `${VAPS}/${'a'.repeat(20_000)}`), 431, 'BadRequest');
    expect(await everything()).toEqual({ policies, events });
  });

  it('a WebSocket watch of a path that names nothing is refused with a Status (the server keeps serving); one of an empty namespace watches every namespace', async () => {
    const upgrade = { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' };
    const ws = (target: string) =>
      socketCall(
        file.base,
        `GET ${target} HTTP/1.1\r\nHost: orchd\r\n${Object.entries(upgrade)
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('')}\r\n`,
      );
    expectStatus(await ws('//'), 404, 'NotFound');
    expectStatus(await ws(`${VAPS}/%zz?watch=true`), 400, 'BadRequest');
    expect((await ws(`${EVENTS}/namespaces//events?watch=true&timeoutSeconds=1`)).text).toMatch(/^HTTP\/1\.1 101 /);
    expect((await call(file.base, 'GET', '/readyz')).status).toBe(200);
  });
});
