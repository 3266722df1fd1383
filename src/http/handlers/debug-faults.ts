/**
 * /debug/faults: the fault rules of a running server, for tests of controllers in any language.
 * GET answers the FaultConfiguration in force; PUT replaces it (YAML or JSON, refused whole with one
 * line naming the field path when any of it is wrong, and then nothing changes); DELETE clears it.
 * GET /debug/faults/injected lists every fault injected so far. Authorized as the non-resource
 * path it is (server.ts), so whoever may not is refused when authorization is on.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseFaultText } from '../../config/faults.js';
import { V1ALPHA1 } from '../../config/document.js';
import type { Faults } from '../../faults/faults.js';
import { readBody } from '../codec/body.js';
import { send } from '../respond/respond.js';
import * as E from '../respond/status.js';

const JSON_OUT = { format: 'json' as const, pretty: false };

export async function handleDebugFaults(req: IncomingMessage, res: ServerResponse, path: string, faults: Faults | undefined): Promise<void> {
  if (!faults) throw E.pathNotFound();
  const method = req.method ?? 'GET';
  if (path === 'injected') {
    if (method !== 'GET') throw E.methodNotAllowed(method);
    return send(res, 200, { injected: faults.injected() }, JSON_OUT);
  }
  if (path !== '') throw E.pathNotFound();
  switch (method) {
    case 'GET':
      return send(res, 200, configurationOf(faults), JSON_OUT);
    case 'PUT': {
      const parsed = parseFaultText((await readBody(req)).toString('utf8'));
      if (!parsed.ok) throw E.badRequest(parsed.message);
      faults.set(parsed.value);
      return send(res, 200, configurationOf(faults), JSON_OUT);
    }
    case 'DELETE':
      faults.clear();
      return send(res, 200, E.success(), JSON_OUT);
    default:
      throw E.methodNotAllowed(method);
  }
}

const configurationOf = (faults: Faults) => ({ apiVersion: V1ALPHA1, kind: 'FaultConfiguration', ...faults.configuration() });
