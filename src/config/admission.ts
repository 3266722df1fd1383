/**
 * AdmissionConfiguration (apiserver.config.orch.io/v1 only): per-plugin configuration, inline under
 * `configuration` or in a file named by `path` (relative to the AdmissionConfiguration file, as
 * kube-apiserver resolves it). Inline configuration wins when both are given.
 *
 * What each plugin does with its configuration is Kubernetes': MutatingAdmissionWebhook reads a
 * WebhookAdmissionConfiguration (webhook-admission.ts), checked here so a bad one stops the start.
 * ValidatingAdmissionPolicy and MutatingAdmissionPolicy have no configuration kind: Kubernetes
 * builds them without reading it, so any configuration is accepted and ignored (a `path` must
 * still be readable, as kube-apiserver reads the file before handing it to the plugin).
 *
 * Stricter than Kubernetes, which silently ignores them: a plugin orchd does not have, and a second
 * entry for the same plugin (Kubernetes would use the first), are errors.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { FieldPath, duplicate, formatFieldError, invalid, notSupported, required, type FieldError } from '../api/field-errors.js';
import { isObject, type JsonObject } from '../api/json-access.js';
import { arrayOf, obj, str, type Schema } from '../api/schema.js';
import { Seen, objectOf, objectsOf, optString, stringOf } from './checks.js';
import { V1, type DocumentKind, type ReadContext } from './document.js';
import { readWebhookAdmission, type WebhookAdmission } from './webhook-admission.js';

/** The admission plugins orchd runs, by their Kubernetes names. */
export const ADMISSION_PLUGINS = ['MutatingAdmissionPolicy', 'MutatingAdmissionWebhook', 'ValidatingAdmissionPolicy'] as const;
export type AdmissionPluginName = (typeof ADMISSION_PLUGINS)[number];

export interface AdmissionPluginConfiguration {
  name: AdmissionPluginName;
  /** Absolute; set when the configuration came from a file. */
  path?: string;
  /** MutatingAdmissionWebhook's configuration, read and checked (absent: no credentials). */
  webhookAdmission?: WebhookAdmission;
}
export interface AdmissionConfiguration {
  plugins: AdmissionPluginConfiguration[];
}

const schema: Schema = obj(undefined, {
  apiVersion: str(),
  kind: str(),
  plugins: arrayOf(obj(undefined, { name: str(), path: str(), configuration: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } })),
});

const readError = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? (e as Error).message;

function readPluginFile(file: string, path: FieldPath, errs: FieldError[]): JsonObject | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    errs.push(invalid(path, file, `unable to read the plugin configuration: ${readError(e)}`));
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

/** A plugin that ignores its configuration: the file only has to be readable. */
function checkReadable(file: string, path: FieldPath, errs: FieldError[]): void {
  try {
    readFileSync(file);
  } catch (e) {
    errs.push(invalid(path, file, `unable to read the plugin configuration: ${readError(e)}`));
  }
}

/**
 * MutatingAdmissionWebhook's WebhookAdmissionConfiguration. Errors of an inline one carry their
 * own path under `configuration`; those of a file are given at `path`, each with its field.
 */
function readWebhookPlugin(inline: JsonObject | undefined, file: string | undefined, p: FieldPath, errs: FieldError[]): WebhookAdmission | undefined {
  if (inline) {
    const r = readWebhookAdmission(inline, p.child('configuration'));
    errs.push(...r.errors);
    return r.value;
  }
  const doc = file ? readPluginFile(file, p.child('path'), errs) : undefined;
  if (!doc) return undefined;
  const r = readWebhookAdmission(doc, FieldPath.root(''));
  errs.push(...r.errors.map((e) => invalid(p.child('path'), file, formatFieldError(e))));
  return r.value;
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
    const plugin: AdmissionPluginConfiguration = { name: name as AdmissionPluginName, ...(file && !inline ? { path: file } : {}) };
    if (name === 'MutatingAdmissionWebhook') {
      const webhookAdmission = readWebhookPlugin(inline, file, p, errs);
      if (webhookAdmission) plugin.webhookAdmission = webhookAdmission;
    } else if (file && !inline) {
      checkReadable(file, p.child('path'), errs);
    }
    plugins.push(plugin);
  });
  return { value: { plugins }, errors: errs };
}

export const admissionDocument: DocumentKind<AdmissionConfiguration> = {
  kind: 'AdmissionConfiguration',
  schemas: { [V1]: schema },
  read: readAdmission,
};
