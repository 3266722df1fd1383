/**
 * What the end-to-end suites share: one row per served kind (its paths and a valid object), and
 * unique names so that tests in one file never see each other's objects.
 */
import { fixtures } from '../resources/fixtures.js';

export interface KindCase {
  kind: string;
  /** Collection path; for a namespaced kind, in the given namespace (all namespaces when undefined). */
  collection(ns?: string): string;
  item(name: string, ns?: string): string;
  namespaced: boolean;
  /** A valid object of the kind named `name` (namespace left for the path to decide). */
  make(name: string): any;
  /** A change to the object's spec-like content, to check that a PUT took. */
  change(obj: any): void;
  /** Reads back what change() wrote. */
  changed(obj: any): unknown;
}

const ADM = '/apis/admissionregistration.orch.io';

function clusterScoped(prefix: string, plural: string): Pick<KindCase, 'collection' | 'item' | 'namespaced'> {
  return { namespaced: false, collection: () => `${prefix}/${plural}`, item: (name) => `${prefix}/${plural}/${name}` };
}

const named = (o: any, name: string): any => {
  o.metadata = { name };
  return o;
};

export const KINDS: KindCase[] = [
  {
    kind: 'ValidatingAdmissionPolicy',
    ...clusterScoped(`${ADM}/v1`, 'validatingadmissionpolicies'),
    make: (n) => named(fixtures.validatingAdmissionPolicy(), n),
    change: (o) => (o.spec.failurePolicy = 'Ignore'),
    changed: (o) => o.spec.failurePolicy,
  },
  {
    kind: 'ValidatingAdmissionPolicyBinding',
    ...clusterScoped(`${ADM}/v1`, 'validatingadmissionpolicybindings'),
    make: (n) => named(fixtures.validatingAdmissionPolicyBinding(), n),
    change: (o) => (o.spec.validationActions = ['Warn']),
    changed: (o) => o.spec.validationActions,
  },
  ...['v1', 'v1beta1', 'v1alpha1'].map((v): KindCase => ({
    kind: 'MutatingAdmissionPolicy',
    ...clusterScoped(`${ADM}/${v}`, 'mutatingadmissionpolicies'),
    make: (n) => ({ ...named(fixtures.mutatingAdmissionPolicy(), n), apiVersion: `admissionregistration.orch.io/${v}` }),
    change: (o) => (o.spec.reinvocationPolicy = 'IfNeeded'),
    changed: (o) => o.spec.reinvocationPolicy,
  })),
  {
    kind: 'MutatingAdmissionPolicyBinding',
    ...clusterScoped(`${ADM}/v1`, 'mutatingadmissionpolicybindings'),
    make: (n) => named(fixtures.mutatingAdmissionPolicyBinding(), n),
    change: (o) => (o.spec.policyName = 'other.example.com'),
    changed: (o) => o.spec.policyName,
  },
  {
    kind: 'MutatingWebhookConfiguration',
    ...clusterScoped(`${ADM}/v1`, 'mutatingwebhookconfigurations'),
    make: (n) => named(fixtures.mutatingWebhookConfiguration(), n),
    change: (o) => (o.webhooks[1].timeoutSeconds = 7),
    changed: (o) => o.webhooks[1].timeoutSeconds,
  },
  {
    kind: 'Event',
    namespaced: true,
    collection: (ns) => (ns === undefined ? '/apis/events.orch.io/v1/events' : `/apis/events.orch.io/v1/namespaces/${ns}/events`),
    item: (name, ns = 'default') => `/apis/events.orch.io/v1/namespaces/${ns}/events/${name}`,
    make: (n) => named(fixtures.event(), n),
    // Most of an Event is immutable (note, reason, regarding, …); its series is what grows.
    change: (o) => (o.series = { count: 2, lastObservedTime: '2026-01-02T03:04:06.000000Z' }),
    changed: (o) => o.series,
  },
  {
    kind: 'Namespace',
    ...clusterScoped('/api/v1', 'namespaces'),
    make: (n) => named(fixtures.namespace(), n),
    change: (o) => (o.metadata.labels = { ...o.metadata.labels, changed: 'yes' }),
    changed: (o) => o.metadata.labels?.changed,
  },
];

export const kindCase = (kind: string): KindCase => KINDS.find((k) => k.kind === kind)!;

let counter = 0;
/** A DNS-label name no other test in this process uses. */
export const unique = (prefix: string): string => `${prefix}-${process.pid}-${++counter}`;

/** The apiVersion a collection path serves, e.g. `admissionregistration.orch.io/v1beta1` or `v1`. */
export const apiVersionOfPath = (path: string): string => {
  const m = /^\/apis\/([^/]+)\/([^/]+)\//.exec(path);
  return m ? `${m[1]}/${m[2]}` : 'v1';
};

export interface RawReply {
  status: number;
  /** Header lines as sent, names lower-cased: a header sent twice appears twice. */
  headers: [string, string][];
  body: any;
}

/** A request through node:http, for what fetch folds together (repeated headers). */
export async function rawCall(base: string, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<RawReply> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(base + path, { method, headers: { 'Content-Type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i].toLowerCase(), res.rawHeaders[i + 1]]);
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: pairs, body: parsed });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export const warningsOf = (r: RawReply): string[] => r.headers.filter(([k]) => k === 'warning').map(([, v]) => v);

export interface SocketReply {
  /** 0 when the connection closed (or the wait ended) before a status line. */
  status: number;
  /** The raw head and body, for messages. */
  text: string;
  body: any;
}

/**
 * Writes `request` as it is onto a fresh TCP connection (node:net), so that no client library
 * parses, normalises or refuses the request line, and reads one answer: until its Content-Length
 * is in, the server closes, or timeoutMs passes (bounded).
 */
export async function socketCall(base: string, request: string, timeoutMs = 5000): Promise<SocketReply> {
  const { connect } = await import('node:net');
  const { hostname, port } = new URL(base);
  const text = await new Promise<string>((resolve) => {
    let got = Buffer.alloc(0);
    const s = connect(Number(port), hostname, () => s.write(request));
    const done = () => {
      clearTimeout(timer);
      s.destroy();
      resolve(got.toString('utf8'));
    };
    const timer = setTimeout(done, timeoutMs);
    s.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      const end = got.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(got.subarray(0, end).toString('latin1'));
      if (end >= 0 && length && got.length >= end + 4 + Number(length[1])) done();
    });
    s.on('close', done);
    s.on('error', done);
  });
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  const bodyText = text.slice(text.indexOf('\r\n\r\n') + 4);
  let body: unknown = bodyText;
  try {
    body = JSON.parse(bodyText);
  } catch {
    // not JSON: tests look at text
  }
  return { status, text, body };
}
