import { servingTls } from '../http/tls.js';
import type { Logger } from '../observability/logger.js';
import type { ServeOptions } from './serve-options.js';

/** The certificate the server serves with: the configured one, a self-signed one kept in the data folder, or none (plain HTTP on loopback without authentication). */
export async function servingCertificate(opts: ServeOptions, logger: Logger) {
  const tls = await servingTls({
    host: opts.host,
    dataDir: opts.dataDir ?? '',
    ...(opts.config?.tls ? { given: opts.config.tls } : {}),
    authenticationConfigured: opts.config?.authentication !== undefined,
    onRegenerate: (why) => logger.warn('replacing the self-signed serving certificate', { why }),
  });
  if (tls?.selfSigned) {
    logger.info('serving with a self-signed certificate: trust it with kubectl --certificate-authority', { certificateAuthority: tls.certFile, key: tls.keyFile });
  }
  return tls;
}
