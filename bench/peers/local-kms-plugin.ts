/**
 * A local KMS v2 plugin, for trying `kms` providers without a cloud KMS: it serves the
 * KeyManagementService on a unix socket and seals data keys with AES-256-GCM under keys it holds in
 * memory only (so what it sealed is lost when it stops: a development and test stand-in, never a
 * place for real keys). Tests and the benchmark run it in process; by hand:
 *
 *   npm run build && node dist/bench/peers/local-kms-plugin.js --socket /tmp/kms.sock
 *   # EncryptionConfiguration: - kms: {apiVersion: v2, name: local, endpoint: unix:///tmp/kms.sock}
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Server, ServerCredentials, status as grpcStatus, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { kmsServiceDefinition, type DecryptRequest } from '../../src/log/encryption/kms/plugin-client.js';

const NONCE = 12;
const TAG = 16;
/** Handed back with every sealed key and required on Decrypt, as real plugins use annotations. */
const ANNOTATION = 'sealed-by.kms.orch.io';

type Handler<Req, Res> = (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => void;

export class LocalKmsPlugin {
  /** Calls answered, by method. */
  readonly calls = { status: 0, encrypt: 0, decrypt: 0 };
  /** Holds Decrypt answers back this long (a slow plugin). */
  decryptDelayMs = 0;
  /** Answers this many of the next Decrypt calls UNAVAILABLE (a plugin that hiccups). */
  failNextDecrypts = 0;
  private readonly keys = new Map<string, Buffer>();
  private current = '';
  private server: Server | undefined;

  constructor(readonly socket: string) {
    this.rotate();
  }

  /** The `endpoint` of an EncryptionConfiguration kms provider that reaches this plugin. */
  get endpoint(): string {
    return `unix://${this.socket}`;
  }

  get keyId(): string {
    return this.current;
  }

  /** Starts sealing with a new key (Status reports its id); the old ones still open what they sealed. */
  rotate(): string {
    this.current = `local-${this.keys.size + 1}`;
    this.keys.set(this.current, randomBytes(32));
    return this.current;
  }

  async start(): Promise<void> {
    await rm(this.socket, { force: true });
    const server = new Server();
    server.addService(kmsServiceDefinition, { Status: this.status, Encrypt: this.encrypt, Decrypt: this.decrypt });
    await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${this.socket}`, ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
    this.server = server;
  }

  /** Stops at once, as a crashed plugin would; start() serves again with the same keys. */
  async stop(): Promise<void> {
    this.server?.forceShutdown();
    this.server = undefined;
    await rm(this.socket, { force: true });
  }

  private readonly status: Handler<unknown, unknown> = (_call, callback) => {
    this.calls.status++;
    callback(null, { version: 'v2', healthz: 'ok', keyId: this.current });
  };

  private readonly encrypt: Handler<{ plaintext: Buffer }, unknown> = (call, callback) => {
    this.calls.encrypt++;
    const nonce = randomBytes(NONCE);
    const c = createCipheriv('aes-256-gcm', this.keys.get(this.current)!, nonce);
    const ciphertext = Buffer.concat([nonce, c.update(call.request.plaintext), c.final(), c.getAuthTag()]);
    callback(null, { ciphertext, keyId: this.current, annotations: { [ANNOTATION]: Buffer.from(this.current) } });
  };

  private readonly decrypt: Handler<DecryptRequest, unknown> = (call, callback) => {
    this.calls.decrypt++;
    if (this.failNextDecrypts > 0) {
      this.failNextDecrypts--;
      return callback({ code: grpcStatus.UNAVAILABLE, details: 'the key service is busy' });
    }
    const answer = () => {
      const { ciphertext, keyId, annotations } = call.request;
      const key = this.keys.get(keyId);
      if (!key || annotations[ANNOTATION]?.toString() !== keyId) return callback({ code: grpcStatus.INVALID_ARGUMENT, details: `unknown key id ${JSON.stringify(keyId)}` });
      try {
        const d = createDecipheriv('aes-256-gcm', key, ciphertext.subarray(0, NONCE));
        d.setAuthTag(ciphertext.subarray(ciphertext.length - TAG));
        callback(null, { plaintext: Buffer.concat([d.update(ciphertext.subarray(NONCE, ciphertext.length - TAG)), d.final()]) });
      } catch {
        callback({ code: grpcStatus.INVALID_ARGUMENT, details: 'the ciphertext does not open under its key' });
      }
    };
    if (this.decryptDelayMs > 0) setTimeout(answer, this.decryptDelayMs).unref();
    else answer();
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { socket: { type: 'string' } } });
  if (!values.socket) {
    process.stderr.write('usage: kms-plugin --socket PATH\n');
    process.exit(2);
  }
  const plugin = new LocalKmsPlugin(values.socket);
  await plugin.start();
  process.stderr.write(`kms-plugin: serving KMS v2 at ${plugin.endpoint} (key id ${plugin.keyId}; keys in memory only)\n`);
  const stop = () => void plugin.stop().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

// Through the real path: the script may be run by a symlinked path (a node_modules cache).
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`kms-plugin: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
