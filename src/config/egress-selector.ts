/**
 * EgressSelectorConfiguration (apiserver.orch.io/v1beta1 only): how outbound connections of each
 * kind of traffic are dialed. Validation follows kube-apiserver's: a known selection name (`master`
 * is read as `controlplane`) at most once, Direct without a transport, HTTPConnect over exactly one
 * of TCP or UDS, GRPC over UDS only, plain http:// without TLS settings, and https:// with a client
 * certificate and key that exist (and a CA bundle that exists when given).
 */
import { resolve } from 'node:path';
import { FieldPath, duplicate, forbidden, invalid, notSupported, required, type FieldError } from '../api/field-errors.js';
import type { JsonObject } from '../api/json-access.js';
import { arrayOf, obj, str, type Schema } from '../api/schema.js';
import { Seen, existingFileErrors, objectOf, objectsOf, optString, stringOf } from './checks.js';
import { V1BETA1, type DocumentKind, type ReadContext } from './document.js';

export const EGRESS_SELECTION_NAMES = ['cluster', 'controlplane', 'etcd'] as const;
export type EgressSelectionName = (typeof EGRESS_SELECTION_NAMES)[number];
export const PROXY_PROTOCOLS = ['Direct', 'HTTPConnect', 'GRPC'] as const;

export interface TLSFiles {
  /** Absent: the system roots. */
  caBundle?: string;
  clientCert: string;
  clientKey: string;
}
export type Transport = { tcp: { url: string; tlsConfig?: TLSFiles } } | { uds: { udsName: string } };
export type Connection = { proxyProtocol: 'Direct' } | { proxyProtocol: 'HTTPConnect' | 'GRPC'; transport: Transport };

export interface EgressSelectorConfiguration {
  /** By canonical name; a name that is not here is dialed directly. */
  selections: Partial<Record<EgressSelectionName, Connection>>;
}

const schema: Schema = obj(undefined, {
  apiVersion: str(),
  kind: str(),
  egressSelections: arrayOf(
    obj(undefined, {
      name: str(),
      connection: obj(undefined, {
        proxyProtocol: str(),
        transport: obj(undefined, {
          tcp: obj(undefined, { url: str(), tlsConfig: obj(undefined, { caBundle: str(), clientKey: str(), clientCert: str() }) }),
          uds: obj(undefined, { udsName: str() }),
        }),
      }),
    }),
  ),
});

function readTLS(o: JsonObject | undefined, url: string, path: FieldPath, errs: FieldError[]): TLSFiles | undefined {
  const file = (key: string) => {
    const v = optString(o, key);
    // Relative to the working folder, as kube-apiserver opens them.
    return v ? resolve(v) : '';
  };
  if (url.startsWith('http://')) {
    for (const key of ['caBundle', 'clientCert', 'clientKey']) {
      if (optString(o, key)) errs.push(forbidden(path.child(key), 'must be empty when using HTTP'));
    }
    return undefined;
  }
  if (!o) {
    errs.push(required(path, 'TLSConfig must be present when using HTTPS'));
    return undefined;
  }
  const caBundle = file('caBundle');
  const clientCert = file('clientCert');
  const clientKey = file('clientKey');
  if (caBundle) errs.push(...existingFileErrors(caBundle, path.child('caBundle'), 'TLS config ca bundle does not exist'));
  if (!clientCert) errs.push(required(path.child('clientCert'), 'Using TLS requires clientCert'));
  else errs.push(...existingFileErrors(clientCert, path.child('clientCert'), 'TLS client cert does not exist'));
  if (!clientKey) errs.push(required(path.child('clientKey'), 'Using TLS requires clientKey'));
  else errs.push(...existingFileErrors(clientKey, path.child('clientKey'), 'TLS client key does not exist'));
  return { ...(caBundle ? { caBundle } : {}), clientCert, clientKey };
}

function readTransport(o: JsonObject | undefined, protocol: 'HTTPConnect' | 'GRPC', path: FieldPath, errs: FieldError[]): Transport | undefined {
  if (!o) {
    errs.push(required(path, `transport must be set for ${protocol}`));
    return undefined;
  }
  const tcp = objectOf(o, 'tcp');
  const uds = objectOf(o, 'uds');
  if (protocol === 'GRPC' && !uds) {
    errs.push(required(path.child('uds'), 'UDS must be set with GRPC'));
    return undefined;
  }
  if (protocol === 'GRPC' && tcp) errs.push(forbidden(path.child('tcp'), 'the GRPC proxy protocol is not supported over TCP'));
  if (protocol === 'HTTPConnect' && tcp && uds) {
    errs.push(invalid(path.child('tcp'), 'tcp', 'TCP and UDS cannot both be set'));
    return undefined;
  }
  if (!tcp && !uds) {
    errs.push(required(path.child('tcp'), 'One of TCP or UDS must be set'));
    return undefined;
  }
  if (uds) {
    const udsName = stringOf(uds, 'udsName');
    const p = path.child('uds', 'udsName');
    if (udsName === '') errs.push(required(p, 'must be present for UDS connections'));
    else if (udsName.startsWith('unix://')) errs.push(invalid(p, udsName, 'must be a socket path without the unix:// prefix'));
    return { uds: { udsName } };
  }
  const url = stringOf(tcp, 'url');
  const p = path.child('tcp');
  if (url === '') errs.push(required(p.child('url')));
  else if (!url.startsWith('http://') && !url.startsWith('https://')) {
    errs.push(invalid(p.child('url'), url, 'supported connection protocols are http:// and https://'));
  }
  const tlsConfig = url ? readTLS(objectOf(tcp, 'tlsConfig'), url, p.child('tlsConfig'), errs) : undefined;
  return { tcp: { url, ...(tlsConfig ? { tlsConfig } : {}) } };
}

function readEgress(doc: JsonObject, _ctx: ReadContext, root: FieldPath): { value: EgressSelectorConfiguration; errors: FieldError[] } {
  const errs: FieldError[] = [];
  const selections: EgressSelectorConfiguration['selections'] = {};
  const seen = new Seen();
  objectsOf(doc, 'egressSelections').forEach((s, i) => {
    const p = root.child('egressSelections').index(i);
    const given = stringOf(s, 'name');
    // `master` is the deprecated spelling of controlplane; both name the same selection.
    const name = given.toLowerCase() === 'master' ? 'controlplane' : given.toLowerCase();
    if (given === '') errs.push(required(p.child('name')));
    else if (!(EGRESS_SELECTION_NAMES as readonly string[]).includes(name)) errs.push(notSupported(p.child('name'), given, [...EGRESS_SELECTION_NAMES, 'master']));
    else if (seen.repeat(name)) errs.push(duplicate(p.child('name'), given));

    const conn = objectOf(s, 'connection');
    const cp = p.child('connection');
    if (!conn) return errs.push(required(cp));
    const protocol = stringOf(conn, 'proxyProtocol');
    const transportObj = objectOf(conn, 'transport');
    let connection: Connection | undefined;
    if (protocol === '') errs.push(required(cp.child('proxyProtocol')));
    else if (protocol === 'Direct') {
      if (transportObj) errs.push(invalid(cp.child('transport'), 'direct', 'config must be absent for direct connect'));
      connection = { proxyProtocol: 'Direct' };
    } else if (protocol === 'HTTPConnect' || protocol === 'GRPC') {
      const transport = readTransport(transportObj, protocol, cp.child('transport'), errs);
      if (transport) connection = { proxyProtocol: protocol, transport };
    } else errs.push(notSupported(cp.child('proxyProtocol'), protocol, PROXY_PROTOCOLS));
    if (connection && (EGRESS_SELECTION_NAMES as readonly string[]).includes(name) && !selections[name as EgressSelectionName]) {
      selections[name as EgressSelectionName] = connection;
    }
  });
  return { value: { selections }, errors: errs };
}

export const egressSelectorDocument: DocumentKind<EgressSelectorConfiguration> = {
  kind: 'EgressSelectorConfiguration',
  schemas: { [V1BETA1]: schema },
  read: readEgress,
};
