/**
 * The MutatingAdmissionWebhook plugin's configuration, Kubernetes' WebhookAdmissionConfiguration
 * (apiserver.config.orch.io/v1): `kubeConfigFile`, an absolute path to a kubeconfig whose users
 * are the credentials presented to webhooks, chosen by the webhook's host (credentialsFor).
 *
 *   apiVersion: apiserver.config.orch.io/v1
 *   kind: WebhookAdmissionConfiguration
 *   kubeConfigFile: /etc/orchd/webhooks.kubeconfig
 *
 * `staticManifestsDir` (webhook configurations from files) needs a Kubernetes feature gate orchd
 * does not have, and is refused.
 */
import { isAbsolute } from 'node:path';
import { FieldPath, forbidden, invalid, notSupported, required, type FieldError } from '../api/field-errors.js';
import type { JsonObject } from '../api/json-access.js';
import { obj, str, type Schema } from '../api/schema.js';
import { findTypeErrors, findUnknownFields } from '../api/unknown-fields.js';
import { optString, stringOf } from './checks.js';
import { V1 } from './document.js';
import { readKubeConfig, type ClientCredentials, type KubeConfig } from './kubeconfig.js';

export const WEBHOOK_ADMISSION_KIND = 'WebhookAdmissionConfiguration';

export interface WebhookAdmission {
  /** Absent: webhooks are called without credentials. */
  kubeConfig?: KubeConfig;
}

const schema: Schema = obj(undefined, { apiVersion: str(), kind: str(), kubeConfigFile: str(), staticManifestsDir: str() });

/** Reads the plugin's configuration document; error paths start at root (`plugins[0].configuration`). */
export function readWebhookAdmission(doc: JsonObject, root: FieldPath): { value: WebhookAdmission; errors: FieldError[] } {
  const at = (path: string) => root.child(path);
  const errs: FieldError[] = [
    ...findTypeErrors(doc, schema).map((e) => ({ ...e, field: String(at(e.field)) })),
    ...findUnknownFields(doc, schema).map((u) => forbidden(at(u.path), `unknown field in ${V1} ${WEBHOOK_ADMISSION_KIND}`)),
  ];
  if (errs.length > 0) return { value: {}, errors: errs };
  const apiVersion = stringOf(doc, 'apiVersion');
  const kind = stringOf(doc, 'kind');
  if (!apiVersion) errs.push(required(at('apiVersion')));
  else if (apiVersion !== V1) errs.push(notSupported(at('apiVersion'), apiVersion, [V1]));
  if (!kind) errs.push(required(at('kind')));
  else if (kind !== WEBHOOK_ADMISSION_KIND) errs.push(notSupported(at('kind'), kind, [WEBHOOK_ADMISSION_KIND]));
  if (optString(doc, 'staticManifestsDir')) errs.push(forbidden(at('staticManifestsDir'), 'requires the ManifestBasedAdmissionControlConfig feature gate, which orchd does not have'));
  const file = stringOf(doc, 'kubeConfigFile');
  // Kubernetes' LoadConfig: an empty path is not absolute either.
  if (!isAbsolute(file)) {
    errs.push(invalid(at('kubeConfigFile'), file, 'must be an absolute file path'));
    return { value: {}, errors: errs };
  }
  const kc = readKubeConfig(file);
  errs.push(...kc.errors.map((message) => invalid(at('kubeConfigFile'), file, message)));
  return { value: { kubeConfig: kc.value }, errors: errs };
}

/** `*.rest.of.name` for each suffix of host:port or host, most specific first. */
const starNames = (target: string): string[] => {
  const steps = target.split('.');
  return steps.slice(1).map((_, i) => `*.${steps.slice(i + 1).join('.')}`);
};

/**
 * The credentials for a webhook at host:port, as Kubernetes' webhook authentication resolver picks
 * them: a user named exactly host:port, then `*.`-prefixed suffixes of it; for port 443 the same
 * without the port; then the user `*`; then the current context's user; else none.
 */
export function credentialsFor(config: WebhookAdmission, hostPort: string): ClientCredentials | undefined {
  const kc = config.kubeConfig;
  if (!kc) return undefined;
  const candidates = [hostPort, ...starNames(hostPort)];
  const colon = hostPort.lastIndexOf(':');
  if (colon > 0 && hostPort.slice(colon + 1) === '443') {
    // Go's SplitHostPort drops the brackets of an IPv6 host.
    const host = hostPort.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
    candidates.push(host, ...starNames(host));
  }
  candidates.push('*');
  if (kc.currentUser !== undefined) candidates.push(kc.currentUser);
  for (const name of candidates) {
    const creds = kc.users.get(name);
    if (creds) return creds;
  }
  return undefined;
}
