/**
 * The authorization configuration file, reloaded while the server runs, as kube-apiserver reloads
 * `--authorization-config` (the ConfigReloader cycle): a changed valid file whose chain can be built
 * (connection files read, match conditions compiled) replaces the chain; anything else leaves the
 * last good chain deciding, logged and counted. Requests always ask the chain serving at the time.
 *
 * As in kube-apiserver, only webhooks come and go freely: every other type the server started with
 * (RBAC, AlwaysDeny, …) must still be in a reloaded file.
 */
import type { AuthorizationConfiguration } from '../config/authorization.js';
import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from '../api/authorization.js';
import { buildAuthorizationChain, type AuthorizerChain, type ChainDeps } from './authorization-chain.js';
import { ConfigReloader, type ParseConfig } from '../config/reloader.js';
import type { Sample } from '../observability/samples.js';

export interface AuthorizerReloadOptions {
  file: string;
  /** The text the running configuration was read from. */
  text: string;
  parse: ParseConfig<AuthorizationConfiguration>;
  deps: ChainDeps;
  intervalMs?: number;
  onReloaded?: () => void;
  onFailed?: (problems: string[]) => void;
}

export class ReloadingAuthorizer implements Authorizer {
  private readonly reloader: ConfigReloader<AuthorizationConfiguration, AuthorizerChain>;

  constructor(current: AuthorizerChain, o: AuthorizerReloadOptions) {
    const required = [...new Set(current.types.filter((t) => t !== 'Webhook'))].sort();
    this.reloader = new ConfigReloader(current, {
      ...o,
      parse: (text) => {
        const parsed = o.parse(text);
        if (!parsed.ok) return parsed;
        const missing = required.filter((t) => !parsed.value.authorizers.some((a) => a.type === t));
        return missing.length > 0 ? { ok: false, problems: [`${o.file}: missing required types: [${missing.join(' ')}]`] } : parsed;
      },
      build: (config) => buildAuthorizationChain(config, o.deps),
      dispose: (chain) => chain.close(),
      metricPrefix: 'orchd_authorization_config',
    });
  }

  authorize(attributes: AuthorizationAttributes): AuthorizationDecision | Promise<AuthorizationDecision> {
    return this.reloader.current.authorize(attributes);
  }

  start(): void {
    this.reloader.start();
  }

  close(): void {
    this.reloader.close();
  }

  samples(): Sample[] {
    return [...this.reloader.current.samples(), ...this.reloader.samples()];
  }
}
