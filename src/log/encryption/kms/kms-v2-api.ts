/**
 * The KMS v2 plugin API as kube-apiserver speaks it (k8s.io/kms/apis/v2, api.proto): the same
 * package, service, methods, field names and numbers, so any KMS v2 plugin written for Kubernetes
 * serves orchd unchanged. Written as the protobuf descriptor that @grpc/proto-loader loads (its JSON
 * form of the .proto) rather than as a .proto file: a build copies no file beside the compiled code,
 * and a server that cannot find its .proto would fail at start. The .proto it stands for:
 *
 *   syntax = "proto3";
 *   package v2;
 *   service KeyManagementService {
 *     rpc Status(StatusRequest) returns (StatusResponse) {}    // polled: health and current key id
 *     rpc Decrypt(DecryptRequest) returns (DecryptResponse) {} // opens a data key sealed earlier
 *     rpc Encrypt(EncryptRequest) returns (EncryptResponse) {} // seals a fresh data key
 *   }
 *   message StatusRequest {}
 *   message StatusResponse { string version = 1; string healthz = 2; string key_id = 3; }
 *   message DecryptRequest { bytes ciphertext = 1; string uid = 2; string key_id = 3; map<string, bytes> annotations = 4; }
 *   message DecryptResponse { bytes plaintext = 1; }
 *   message EncryptRequest { bytes plaintext = 1; string uid = 2; }
 *   message EncryptResponse { bytes ciphertext = 1; string key_id = 2; map<string, bytes> annotations = 3; }
 *
 * version must be "v2"; healthz anything but "ok" fails the health check; annotations are stored in
 * the clear beside the sealed key (keys fully qualified domain names, keys and values at most 32 KiB).
 */
import { fromJSON } from '@grpc/proto-loader';

const string = (id: number) => ({ type: 'string', id });
const bytes = (id: number) => ({ type: 'bytes', id });
const annotations = (id: number) => ({ keyType: 'string', type: 'bytes', id });
const rpc = (name: string) => ({ requestType: `${name}Request`, responseType: `${name}Response`, comment: '' });

// Fields are named as the JavaScript objects carry them (key_id as keyId; the wire knows only the
// numbers). defaults: an absent field reads as '' or empty bytes.
export const kmsV2Package = fromJSON(
  {
    nested: {
      v2: {
        nested: {
          KeyManagementService: { methods: { Status: rpc('Status'), Decrypt: rpc('Decrypt'), Encrypt: rpc('Encrypt') } },
          StatusRequest: { fields: {} },
          StatusResponse: { fields: { version: string(1), healthz: string(2), keyId: string(3) } },
          DecryptRequest: { fields: { ciphertext: bytes(1), uid: string(2), keyId: string(3), annotations: annotations(4) } },
          DecryptResponse: { fields: { plaintext: bytes(1) } },
          EncryptRequest: { fields: { plaintext: bytes(1), uid: string(2) } },
          EncryptResponse: { fields: { ciphertext: bytes(1), keyId: string(2), annotations: annotations(3) } },
        },
      },
    },
  },
  { defaults: true },
);
