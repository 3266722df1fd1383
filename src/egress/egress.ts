/**
 * The contract outbound HTTPS callers (admission webhooks, authorizer webhooks, OIDC issuers) dial
 * through: an agent per egress selection, built from the EgressSelectorConfiguration. Callers pass
 * their own TLS settings for the destination (caBundle, client certificate); the egress decides
 * only how the TCP connection is made (Direct, or through an HTTP CONNECT proxy over TCP or UDS).
 */
import { Agent as HttpsAgent, type AgentOptions } from 'node:https';

export type EgressSelection = 'controlplane' | 'cluster' | 'etcd';

export interface Egress {
  /** An agent whose connections go the way the selection says; TLS options are the destination's. */
  httpsAgent(selection: EgressSelection, tls?: Pick<AgentOptions, 'ca' | 'cert' | 'key' | 'servername' | 'rejectUnauthorized'>): HttpsAgent;
}

/** No EgressSelectorConfiguration: every selection dials directly. */
export const directEgress: Egress = {
  httpsAgent: (_selection, tls) => new HttpsAgent({ keepAlive: true, ...tls }),
};
