/**
 * AdmissionConfiguration (apiserver.config.orch.io/v1 only): per-plugin configuration, inline under
 * `configuration` or in a file named by `path` (relative to the AdmissionConfiguration file, as
 * kube-apiserver resolves it). Inline configuration wins when both are given. Here the plugin's
 * configuration is read and parsed; what each plugin accepts in it is that plugin's business.
 *
 * Stricter than Kubernetes, which silently ignores them: a plugin orchd does not have, and a second
 * entry for the same plugin (Kubernetes would use the first), are errors.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { FieldPath, duplicate, invalid, notSupported, required, type FieldError } from '../resources/field-errors.js';
import { isObject, type JsonObject } from '../resources/json-access.js';
import { arrayOf, obj, str, type Schema } from '../resources/schema.js';
import { Seen, objectOf, objectsOf, optString, stringOf } from './checks.js';
import { V1, type DocumentKind, type ReadContext } from './document.js';

/** The admission plugins orchd runs, by their Kubernetes names. */
export const ADMISSION_PLUGINS = ['MutatingAdmissionPolicy', 'MutatingAdmissionWebhook', 'ValidatingAdmissionPolicy'] as const;
export type AdmissionPluginName = (typeof ADMISSION_PLUGINS)[number];

export interface AdmissionPluginConfiguration {
  name: AdmissionPluginName;
  /** The plugin's own configuration document, from `configuration` or from the file at `path`. */
  configuration?: JsonObject;
  /** Absolute; set when the configuration came from a file. */
  path?: string;
}
export interface AdmissionConfiguration {
  plugins: AdmissionPluginConfiguration[];
}

const schema: Schema = obj(undefined, {
  apiVersion: str(),
  kind: str(),
  plugins: arrayOf(obj(undefined, { name: str(), path: str(), configuration: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } })),
});

function readPluginFile(file: string, path: FieldPath, errs: FieldError[]): JsonObject | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    errs.push(invalid(path, file, `unable to read the plugin configuration: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`));
    return undefined;
  }
  const doc = parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length > 0) {
    errs.push(invalid(path, file, `unable to parse the plugin configuration: ${doc.errors[0].message.split('\n')[0]}`));
    return undefined;
  }
  const value: unknown = doc.toJS();
  if (!isObject(value)) {
    errs.push(invalid(path, file, 'the plugin configuration must be an object'));
    return undefined;
  }
  return value;
}

function readAdmission(doc: JsonObject, ctx: ReadContext, root: FieldPath): { value: AdmissionConfiguration; errors: FieldError[] } {
  const errs: FieldError[] = [];
  const seen = new Seen();
  const plugins: AdmissionPluginConfiguration[] = [];
  objectsOf(doc, 'plugins').forEach((o, i) => {
    const p = root.child('plugins').index(i);
    const name = stringOf(o, 'name');
    if (name === '') errs.push(required(p.child('name')));
    else if (!(ADMISSION_PLUGINS as readonly string[]).includes(name)) errs.push(notSupported(p.child('name'), name, ADMISSION_PLUGINS));
    else if (seen.repeat(name)) errs.push(duplicate(p.child('name'), name));

    const inline = objectOf(o, 'configuration');
    const given = optString(o, 'path');
    const file = given ? resolve(ctx.baseDir, given) : undefined;
    const configuration = inline ?? (file ? readPluginFile(file, p.child('path'), errs) : undefined);
    plugins.push({
      name: name as AdmissionPluginName,
      ...(configuration ? { configuration } : {}),
      ...(file && !inline ? { path: file } : {}),
    });
  });
  return { value: { plugins }, errors: errs };
}

export const admissionDocument: DocumentKind<AdmissionConfiguration> = {
  kind: 'AdmissionConfiguration',
  schemas: { [V1]: schema },
  read: readAdmission,
};
