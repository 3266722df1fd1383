import { credentials, loadPackageDefinition, status, type GrpcObject, type ServiceClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import { kmsV2Package } from './kms-v2-api.js';

const KeyManagementService = (loadPackageDefinition(kmsV2Package).v2 as GrpcObject).KeyManagementService as ServiceClientConstructor;

/** The KMS v2 service, for a server that implements it (a plugin, a test's stand-in). */
export const kmsServiceDefinition: ServiceDefinition = KeyManagementService.service;

export interface StatusResponse {
  version: string;
  healthz: string;
  keyId: string;
}
export interface EncryptResponse {
  ciphertext: Buffer;
  keyId: string;
  annotations: Record<string, Buffer>;
}
export interface DecryptRequest {
  ciphertext: Buffer;
  uid: string;
  keyId: string;
  annotations: Record<string, Buffer>;
}

type Unary = (request: unknown, options: { deadline: number }, callback: (err: Error | null, response: unknown) => void) => void;

/**
 * A KMS v2 plugin reached over gRPC at its endpoint (`unix:///path/to/socket`). Every call carries a
 * deadline of `timeoutMs` (the provider's `timeout`), so a plugin that hangs costs a bounded wait.
 */
export class KmsPluginClient {
  private readonly client: InstanceType<ServiceClientConstructor>;

  constructor(
    endpoint: string,
    private readonly timeoutMs: number,
  ) {
    this.client = new KeyManagementService(endpoint, credentials.createInsecure(), {
      // grpc's default reconnect backoff grows to 2 minutes; a plugin that restarts should be found
      // again by the next health poll (every 10 s while failing), not minutes later.
      'grpc.initial_reconnect_backoff_ms': 500,
      'grpc.max_reconnect_backoff_ms': 5000,
    });
  }

  status(): Promise<StatusResponse> {
    return this.call('Status', {});
  }

  encrypt(plaintext: Buffer, uid: string): Promise<EncryptResponse> {
    return this.call('Encrypt', { plaintext, uid });
  }

  async decrypt(request: DecryptRequest): Promise<Buffer> {
    return (await this.call<{ plaintext: Buffer }>('Decrypt', request)).plaintext;
  }

  close(): void {
    this.client.close();
  }

  private call<T>(method: string, request: unknown): Promise<T> {
    const fn = (this.client as unknown as Record<string, Unary>)[method].bind(this.client);
    return new Promise<T>((resolve, reject) => fn(request, { deadline: Date.now() + this.timeoutMs }, (err, res) => (err ? reject(err) : resolve(res as T))));
  }
}

/** Whether a failed call may succeed when tried again: the plugin was unreachable, too slow or busy. */
export function mayPass(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === status.UNAVAILABLE || code === status.DEADLINE_EXCEEDED || code === status.RESOURCE_EXHAUSTED;
}
