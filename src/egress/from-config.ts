/**
 * The Egress an EgressSelectorConfiguration describes: per selection, connections are dialed
 * directly or through an HTTP CONNECT proxy reached over TCP (plain http://, or https:// with the
 * configured CA bundle and client certificate) or over a unix socket. The destination's own TLS then
 * runs inside the tunnel, so the proxy sees only encrypted bytes and the caller's caBundle and
 * client certificate are the ones the destination checks.
 */
import { readFileSync } from 'node:fs';
import { isIP, connect as netConnect } from 'node:net';
import { Agent as HttpsAgent, type AgentOptions, type RequestOptions } from 'node:https';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { Connection, EgressSelectorConfiguration } from '../config/egress-selector.js';
import { directEgress, type Egress, type EgressSelection } from './egress.js';
import { openTunnel, type TunnelRequest } from './http-connect.js';

export interface EgressOptions {
  /** How long dialing the proxy and its answer to CONNECT may take; default 30 s. */
  connectTimeoutMs?: number;
}

const CONNECT_TIMEOUT_MS = 30_000;

/** Opens a fresh connection to the proxy. */
type ProxyDialer = () => Omit<TunnelRequest, 'host' | 'port' | 'timeoutMs'>;

/**
 * Throws when a selection cannot be served (GRPC, an unreadable TLS file), so the server does not
 * start with traffic going another way than configured.
 */
export function egressFromConfig(config: EgressSelectorConfiguration, opts: EgressOptions = {}): Egress {
  const timeoutMs = opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
  const dialers = new Map<EgressSelection, ProxyDialer>();
  for (const [name, connection] of Object.entries(config.selections) as [EgressSelection, Connection][]) {
    const dial = proxyDialer(name, connection);
    if (dial) dialers.set(name, dial);
  }
  return {
    httpsAgent: (selection, tls) => {
      const dial = dialers.get(selection);
      return dial ? new TunnelAgent(dial, timeoutMs, { keepAlive: true, ...tls }) : directEgress.httpsAgent(selection, tls);
    },
  };
}

/** undefined: dial directly. */
function proxyDialer(name: EgressSelection, connection: Connection): ProxyDialer | undefined {
  if (connection.proxyProtocol === 'Direct') return undefined;
  if (connection.proxyProtocol === 'GRPC') {
    throw new Error(
      `egress selection ${JSON.stringify(name)}: proxyProtocol GRPC is not supported by orchd: it is konnectivity's own tunnel protocol ` +
        '(dial requests and data packets multiplexed on a gRPC stream), which orchd does not speak; ' +
        'run the konnectivity server in HTTP CONNECT mode and use proxyProtocol HTTPConnect',
    );
  }
  const { transport } = connection;
  if ('uds' in transport) {
    const path = transport.uds.udsName;
    return () => ({ socket: netConnect({ path }), proxy: `unix:${path}`, readyEvent: 'connect' });
  }
  const url = new URL(transport.tcp.url);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (url.protocol === 'http:') {
    const port = Number(url.port || 80);
    return () => ({ socket: netConnect({ host, port }), proxy: transport.tcp.url, readyEvent: 'connect' });
  }
  const files = transport.tcp.tlsConfig;
  const read = (file: string, what: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`egress selection ${JSON.stringify(name)}: cannot read the ${what} ${file}: ${(err as Error).message}`);
    }
  };
  const tls: ConnectionOptions = {
    host,
    port: Number(url.port || 443),
    // Without a CA bundle the system roots verify the proxy, as kube-apiserver does.
    ...(files?.caBundle ? { ca: read(files.caBundle, 'CA bundle') } : {}),
    ...(files ? { cert: read(files.clientCert, 'client certificate'), key: read(files.clientKey, 'client key') } : {}),
    ...(isIP(host) ? {} : { servername: host }),
  };
  return () => ({ socket: tlsConnect(tls), proxy: transport.tcp.url, readyEvent: 'secureConnect' });
}

/** An HTTPS agent whose every new connection is a CONNECT tunnel through the selection's proxy. */
class TunnelAgent extends HttpsAgent {
  constructor(
    private readonly dial: ProxyDialer,
    private readonly timeoutMs: number,
    options: AgentOptions,
  ) {
    super(options);
  }

  override createConnection(options: RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    const host = options.host ?? 'localhost';
    const port = Number(options.port ?? 443);
    openTunnel({ ...this.dial(), host, port, timeoutMs: this.timeoutMs }).then(
      // The options are the request's merged with the agent's: the destination's name, CA and
      // client certificate, as https.Agent would pass them to tls.connect.
      (tunnel) => callback?.(null, tlsConnect({ ...(options as ConnectionOptions), socket: tunnel })),
      (err: Error) => callback?.(err, undefined as unknown as Duplex),
    );
    return undefined;
  }
}
