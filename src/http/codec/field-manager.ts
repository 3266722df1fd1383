import { managerFromUserAgent } from '../../registry/field-manager.js';
import type { FieldManagement } from '../../registry/registry.js';
import type { Request } from '../context.js';

/**
 * Who a write is recorded for in managedFields (the registry's field manager records it): the
 * fieldManager query parameter, else the client's User-Agent product, in the version of the path.
 */
export const fieldManagerOf = (r: Request, fieldManager: string | undefined): FieldManagement => ({
  manager: fieldManager ?? managerFromUserAgent(r.req.headers['user-agent']),
  version: r.route.version,
});
