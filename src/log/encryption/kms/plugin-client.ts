import type { ServiceClientConstructor } from '@grpc/grpc-js';

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
  /** Made at the first call: gRPC is loaded only by a server that has a KMS provider. */
  private client: Promise<InstanceType<ServiceClientConstructor>> | undefined;
  private closed = false;

  constructor(
    private readonly endpoint: string,
    private readonly timeoutMs: number,
  ) {}

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
    this.closed = true;
    void this.client?.then((c) => c.close());
  }

  private async call<T>(method: string, request: unknown): Promise<T> {
    this.client ??= import('./kms-service.js').then(({ kmsClient }) => kmsClient(this.endpoint));
    const client = await this.client;
    if (this.closed) client.close();
    const fn = (client as unknown as Record<string, Unary>)[method].bind(client);
    return new Promise<T>((resolve, reject) => fn(request, { deadline: Date.now() + this.timeoutMs }, (err, res) => (err ? reject(err) : resolve(res as T))));
  }
}

/** gRPC status codes (grpc/doc/statuscodes.md), fixed by the protocol: named here so that this file need not load gRPC. */
const UNAVAILABLE = 14;
const DEADLINE_EXCEEDED = 4;
const RESOURCE_EXHAUSTED = 8;

/** Whether a failed call may succeed when tried again: the plugin was unreachable, too slow or busy. */
export function mayPass(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === UNAVAILABLE || code === DEADLINE_EXCEEDED || code === RESOURCE_EXHAUSTED;
}
