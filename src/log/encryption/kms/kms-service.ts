/**
 * The KMS v2 gRPC service (@grpc/grpc-js and its descriptor): loaded only by what talks gRPC, a KMS
 * provider's first call (plugin-client.ts) or a plugin serving it, so a server without KMS never
 * loads gRPC.
 */
import { credentials, loadPackageDefinition, type GrpcObject, type ServiceClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import { kmsV2Package } from './kms-v2-api.js';

const KeyManagementService = (loadPackageDefinition(kmsV2Package).v2 as GrpcObject).KeyManagementService as ServiceClientConstructor;

/** The KMS v2 service, for a server that implements it (a plugin, a test's stand-in). */
export const kmsServiceDefinition: ServiceDefinition = KeyManagementService.service;

/** A client of the plugin at endpoint (`unix:///path/to/socket`). */
export function kmsClient(endpoint: string): InstanceType<ServiceClientConstructor> {
  return new KeyManagementService(endpoint, credentials.createInsecure(), {
    // grpc's default reconnect backoff grows to 2 minutes; a plugin that restarts should be found
    // again by the next health poll (every 10 s while failing), not minutes later.
    'grpc.initial_reconnect_backoff_ms': 500,
    'grpc.max_reconnect_backoff_ms': 5000,
  });
}
