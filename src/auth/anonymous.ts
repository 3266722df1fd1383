/**
 * Anonymous access for requests that present no credentials: off, on for every path, or on only for
 * the exact paths of `anonymous.conditions` (kube-apiserver's anonymous authenticator). Without an
 * `anonymous` section, kube-apiserver's default applies: enabled everywhere (`--anonymous-auth=true`).
 */
import type { AnonymousAuthConfig } from '../config/authentication.js';

export type AnonymousPolicy = (path: string) => boolean;

export function anonymousPolicy(config: AnonymousAuthConfig | undefined): AnonymousPolicy {
  if (!config) return () => true;
  if (!config.enabled) return () => false;
  if (config.conditions.length === 0) return () => true;
  const paths = new Set(config.conditions.map((c) => c.path));
  return (path) => paths.has(path);
}
