/**
 * How a webhook call ends when it does not end well, in Kubernetes' words:
 *
 * - WebhookCallError (Kubernetes' ErrCallingWebhook): no usable answer (connection, timeout,
 *   non-2xx, undecodable or invalid review). failurePolicy decides: Ignore goes on without the
 *   webhook, Fail refuses the request with a 500 InternalError naming the webhook.
 * - a denial (allowed: false): the webhook's own status, its message prefixed with
 *   `admission webhook "x" denied the request`, whatever failurePolicy says.
 * - a dry run a webhook with side effects cannot take: 400 BadRequest, also not a call failure.
 */
import { AdmissionError, badRequest } from './errors.js';
import { isObject } from '../api/json-access.js';

export class WebhookCallError extends Error {
  constructor(
    readonly webhook: string,
    reason: string,
  ) {
    super(`failed calling webhook "${webhook}": ${reason}`);
    this.name = 'WebhookCallError';
  }
}

/** Kubernetes' ToStatusErr: the webhook's status, made a failure of at least 400. */
export function webhookDenial(webhook: string, result: unknown): AdmissionError {
  const r = isObject(result) ? result : {};
  const deniedBy = `admission webhook "${webhook}" denied the request`;
  const message = typeof r.message === 'string' && r.message ? r.message : '';
  const reason = typeof r.reason === 'string' ? r.reason : '';
  const code = typeof r.code === 'number' && Number.isInteger(r.code) && r.code >= 400 ? r.code : 400;
  return new AdmissionError('WebhookDenied', message ? `${deniedBy}: ${message}` : reason ? `${deniedBy}: ${reason}` : `${deniedBy} without explanation`, {
    ...(reason ? { reason } : {}),
    ...(isObject(r.details) ? { details: r.details } : {}),
    status: code,
  });
}

export const dryRunUnsupported = (webhook: string): AdmissionError => badRequest(`admission webhook "${webhook}" does not support dry run`);
