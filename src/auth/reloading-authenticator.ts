/**
 * The authentication configuration file, reloaded while the server runs, as kube-apiserver reloads
 * `--authentication-config` (the ConfigReloader cycle). A new configuration is swapped in only once
 * its authenticators are built (expressions compiled) and their issuers discovered; an issuer that
 * cannot be reached leaves the last good configuration serving and is tried again at the next check.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { AuthenticationConfiguration } from '../config/authentication.js';
import { RequestAuthenticator, type AuthOutcome, type Authenticator } from './authenticate.js';
import { ConfigReloader, type ParseConfig, type ReloadResult } from '../config/reloader.js';
import type { Sample } from '../observability/samples.js';

export interface ReloadOptions {
  file: string;
  /** The text the running configuration was read from. */
  text: string;
  parse: ParseConfig<AuthenticationConfiguration>;
  build: (config: AuthenticationConfiguration) => RequestAuthenticator;
  intervalMs?: number;
  onReloaded?: () => void;
  onFailed?: (problems: string[]) => void;
}

export class ReloadingAuthenticator implements Authenticator {
  private readonly reloader: ConfigReloader<AuthenticationConfiguration, RequestAuthenticator>;

  constructor(current: RequestAuthenticator, o: ReloadOptions) {
    this.reloader = new ConfigReloader(current, {
      ...o,
      metricPrefix: 'orchd_authentication_config',
      notReady: async (next) => {
        const unreachable = await next.notReady();
        return unreachable.map((issuer) => `issuer ${issuer}: discovery failed; keeping the previous configuration`);
      },
      dispose: (a) => a.close(),
    });
  }

  authenticate(headers: IncomingHttpHeaders, path: string): Promise<AuthOutcome> {
    return this.reloader.current.authenticate(headers, path);
  }

  start(): void {
    this.reloader.current.start();
    this.reloader.start();
  }

  close(): void {
    this.reloader.close();
  }

  /** Reads the file now; one check at a time. */
  check(): Promise<ReloadResult> {
    return this.reloader.check();
  }

  samples(): Sample[] {
    return this.reloader.samples();
  }
}
