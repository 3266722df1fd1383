/**
 * EncryptionConfiguration (apiserver.config.orch.io/v1 only): which stored resources go through which
 * transformers. Validation follows kube-apiserver's: one provider per list item, AES keys of 16, 24
 * or 32 bytes (AES-CBC: 32) and secretbox keys of 32 bytes in standard base64, KMS v2 plugins with
 * unique names reached on unix sockets, lower-case resource names, and no wildcard that overlaps
 * another name of its own list or masks a name of a later list (`*.*`, `*.<group>`, `*.` for core).
 */
import { FieldPath, invalid, required, type FieldError } from '../api/field-errors.js';
import type { JsonObject } from '../api/json-access.js';
import { arrayOf, int, obj, str, type Schema } from '../api/schema.js';
import { Seen, durationOf, formatDuration, objectOf, objectsOf, optNumber, optString, stringOf, stringsOf } from './checks.js';
import { V1, type DocumentKind, type ReadContext } from './document.js';

export const AES_GCM_KEY_SIZES = [16, 24, 32];
/** The spec's limit for AES-CBC (Kubernetes accepts 16 and 24 too, and recommends 32). */
export const AES_CBC_KEY_SIZES = [32];
export const SECRETBOX_KEY_SIZES = [32];
export const KMS_DEFAULT_TIMEOUT_MS = 3000;
export const KMS_DEFAULT_CACHE_SIZE = 1000;

// The shape the file is validated into is the one encryption at rest declares (src/log needs no config).
export type { EncryptionConfiguration, GroupResource, Key, Provider, ResourceConfiguration } from '../log/encryption/configuration.js';
import type { EncryptionConfiguration, GroupResource, Key, Provider, ResourceConfiguration } from '../log/encryption/configuration.js';

const keys = obj(undefined, { keys: arrayOf(obj(undefined, { name: str(), secret: str() })) });
const schema: Schema = obj(undefined, {
  apiVersion: str(),
  kind: str(),
  resources: arrayOf(
    obj(undefined, {
      resources: arrayOf(str()),
      providers: arrayOf(
        obj(undefined, {
          aesgcm: keys,
          aescbc: keys,
          secretbox: keys,
          identity: obj(undefined, {}),
          kms: obj(undefined, { apiVersion: str(), name: str(), cachesize: int(), endpoint: str(), timeout: str() }),
        }),
      ),
    }),
  ),
});

/** `deployments.apps` → apps/deployments, `secrets` → core, `*.` → every core resource, `*.*` → all. */
export function parseGroupResource(text: string): GroupResource {
  const dot = text.indexOf('.');
  return dot < 0 ? { group: '', resource: text } : { group: text.slice(dot + 1), resource: text.slice(0, dot) };
}
const groupResourceText = (gr: GroupResource): string => (gr.group === '' && gr.resource === '*' ? '*.' : gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`);
const sameGR = (a: GroupResource, b: GroupResource) => a.group === b.group && a.resource === b.resource;

function resourceNameErrors(names: string[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  names.forEach((name, j) => {
    const p = path.index(j);
    const gr = parseGroupResource(name);
    if (name !== name.toLowerCase()) errs.push(invalid(p, name, 'resource name should not contain capital letters'));
    else if (name === '') errs.push(required(p));
    else if (name === '*') errs.push(invalid(p, name, "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"));
    else if (gr.group === '*' && gr.resource !== '*') errs.push(invalid(p, name, 'encrypting the same resource across groups is not supported'));
  });
  return errs;
}

/** Duplicates, and a wildcard next to a name it covers, inside one list. */
function overlapErrors(names: string[], path: FieldPath): FieldError[] {
  const grs = names.map(parseGroupResource);
  let duplicate = false;
  let overlap = false;
  grs.forEach((a, i) =>
    grs.forEach((b, j) => {
      if (i === j) return;
      if (sameGR(a, b)) duplicate = true;
      else if ((a.group === '*' && a.resource === '*') || (a.group === b.group && (a.resource === '*' || b.resource === '*'))) overlap = true;
    }),
  );
  const errs: FieldError[] = [];
  if (duplicate) errs.push(invalid(path, names, 'the same resource cannot be specified multiple times'));
  if (overlap) errs.push(invalid(path, names, "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked"));
  return errs;
}

function readKeys(o: JsonObject | undefined, path: FieldPath, sizes: number[], errs: FieldError[]): Key[] {
  const list = objectsOf(o, 'keys');
  if (list.length === 0) {
    errs.push(required(path, 'at least one keys is required'));
    return [];
  }
  return list.map((k, i) => {
    const p = path.index(i);
    const name = stringOf(k, 'name');
    // Go's base64.StdEncoding: padded standard alphabet, line breaks ignored.
    const text = stringOf(k, 'secret').replace(/[\r\n]/g, '');
    if (name === '') errs.push(required(p.child('name'), 'name is a mandatory field for a key'));
    if (text === '') {
      errs.push(required(p.child('secret'), 'secret is a mandatory field for a key'));
      return { name, secret: Buffer.alloc(0) };
    }
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
      errs.push(invalid(p.child('secret'), 'REDACTED', 'secrets must be base64 encoded'));
      return { name, secret: Buffer.alloc(0) };
    }
    const secret = Buffer.from(text, 'base64');
    if (!sizes.includes(secret.length)) {
      errs.push(invalid(p.child('secret'), 'REDACTED', `secret is not of the expected length, got ${secret.length}, expected one of [${sizes.join(' ')}]`));
    }
    return { name, secret };
  });
}

function readKMS(o: JsonObject, path: FieldPath, kmsNames: Seen, errs: FieldError[]): Provider {
  const apiVersion = optString(o, 'apiVersion') ?? 'v1';
  const name = stringOf(o, 'name');
  const endpoint = stringOf(o, 'endpoint');
  const timeoutMs = durationOf(o, 'timeout', path.child('timeout'), errs) ?? (optString(o, 'timeout') === undefined ? KMS_DEFAULT_TIMEOUT_MS : 0);
  const givenCache = optNumber(o, 'cachesize');
  const cachesize = apiVersion === 'v1' ? (givenCache ?? KMS_DEFAULT_CACHE_SIZE) : givenCache;

  if (name === '') errs.push(required(path.child('name'), 'name is a mandatory field for a provider'));
  if (apiVersion !== 'v1' && name.includes(':')) errs.push(invalid(path.child('name'), name, `invalid KMS provider name ${name}, must not contain ':'`));
  if (name && kmsNames.repeat(name)) errs.push(invalid(path.child('name'), name, `duplicate KMS provider name ${name}, names must be unique`));

  if (timeoutMs <= 0 && optString(o, 'timeout') !== undefined) errs.push(invalid(path.child('timeout'), formatDuration(timeoutMs), 'timeout should be a positive value'));

  if (endpoint === '') errs.push(invalid(path.child('endpoint'), '', 'endpoint is a mandatory field for a kms'));
  else {
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(endpoint)?.[1] ?? '';
    if (scheme !== 'unix') errs.push(invalid(path.child('endpoint'), endpoint, `unsupported scheme ${JSON.stringify(scheme)} for KMS provider, only unix is supported`));
  }

  if (apiVersion !== 'v1' && givenCache !== undefined) errs.push(invalid(path.child('cachesize'), givenCache, 'cachesize is not supported in v2'));
  if (apiVersion === 'v1' && cachesize === 0) errs.push(invalid(path.child('cachesize'), 0, 'cachesize should be a positive value, or negative to disable'));

  if (apiVersion !== 'v1' && apiVersion !== 'v2') {
    errs.push(invalid(path.child('apiVersion'), apiVersion, `unsupported apiVersion ${apiVersion} for KMS provider, only v1 and v2 are supported`));
  } else if (apiVersion === 'v1') {
    // kube-apiserver v1.36 refuses KMS v1 unless a deprecated feature gate is on; orchd has no such gate.
    errs.push(invalid(path.child('apiVersion'), apiVersion, 'KMSv1 is deprecated and not supported; use KMSv2 (apiVersion: v2)'));
  }
  return { type: 'kms', name, apiVersion: apiVersion === 'v1' ? 'v1' : 'v2', endpoint, timeoutMs, ...(cachesize !== undefined ? { cachesize } : {}) };
}

const PROVIDER_KEYS = ['kms', 'aesgcm', 'aescbc', 'secretbox', 'identity'] as const;

function readProvider(o: JsonObject, path: FieldPath, kmsNames: Seen, errs: FieldError[]): Provider | undefined {
  const present = PROVIDER_KEYS.filter((k) => objectOf(o, k) !== undefined);
  if (present.length === 0) {
    errs.push(invalid(path, o, 'provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity'));
    return undefined;
  }
  if (present.length > 1) {
    errs.push(invalid(path, o, 'more than one provider specified in a single element, should split into different list elements'));
    return undefined;
  }
  const type = present[0];
  switch (type) {
    case 'kms':
      return readKMS(objectOf(o, 'kms')!, path.child('kms'), kmsNames, errs);
    case 'identity':
      return { type };
    default: {
      const sizes = type === 'aesgcm' ? AES_GCM_KEY_SIZES : type === 'aescbc' ? AES_CBC_KEY_SIZES : SECRETBOX_KEY_SIZES;
      return { type, keys: readKeys(objectOf(o, type), path.child(type, 'keys'), sizes, errs) };
    }
  }
}

function readEncryption(doc: JsonObject, _ctx: ReadContext, root: FieldPath): { value: EncryptionConfiguration; errors: FieldError[] } {
  const errs: FieldError[] = [];
  const rootPath = root.child('resources');
  const entries = objectsOf(doc, 'resources');
  if (entries.length === 0) return { value: { resources: [] }, errors: [required(rootPath, 'at least one resources is required')] };

  const kmsNames = new Seen();
  // Names configured by earlier lists: a later name under one of their wildcards would never apply.
  const earlier: GroupResource[] = [];
  const resources = entries.map((entry, i): ResourceConfiguration => {
    const rp = rootPath.index(i).child('resources');
    const pp = rootPath.index(i).child('providers');
    const names = stringsOf(entry, 'resources');
    if (names.length === 0) errs.push(required(rp, `at least one ${rp} is required`));
    errs.push(...overlapErrors(names, rp), ...resourceNameErrors(names, rp));
    const grs = names.map(parseGroupResource);
    grs.forEach((gr, j) => {
      const mask = earlier.find((e) => e.resource === '*' && (e.group === '*' || e.group === gr.group));
      if (mask) errs.push(invalid(rp.index(j), names[j], `resource ${JSON.stringify(groupResourceText(gr))} is masked by earlier rule ${JSON.stringify(groupResourceText(mask))}`));
    });
    earlier.push(...grs);

    const list = objectsOf(entry, 'providers');
    if (list.length === 0) errs.push(required(pp, `at least one ${pp} is required`));
    const providers = list.flatMap((p, j) => readProvider(p, pp.index(j), kmsNames, errs) ?? []);
    return { resources: grs, providers };
  });
  return { value: { resources }, errors: errs };
}

export const encryptionDocument: DocumentKind<EncryptionConfiguration> = {
  kind: 'EncryptionConfiguration',
  schemas: { [V1]: schema },
  read: readEncryption,
};
