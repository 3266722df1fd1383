import type { Qualified } from '../api/qualified.js';

/**
 * Why admission refuses a request, in its own terms: src/http/respond/errors.ts turns each code into
 * the Status Kubernetes answers with.
 *
 * - Forbidden: 403 about the object, `… is forbidden: <message>`; a policy's denial may carry another
 *   reason and code (a ValidatingAdmissionPolicy's `reason: Invalid` answers 422) and causes.
 * - PolicyDenied: a mutating policy's refusal: the Forbidden details, the first failure's message as
 *   it is, its reason, one cause per failure.
 * - WebhookDenied: the webhook's own status (Kubernetes' ToStatusErr): message, reason, code ≥ 400, details.
 * - BadRequest: 400 with the message; Internal: 500 InternalError with the message.
 */
export type AdmissionErrorCode = 'Forbidden' | 'PolicyDenied' | 'WebhookDenied' | 'BadRequest' | 'Internal';

export interface AdmissionErrorInfo {
  target?: Qualified;
  /** The Status reason when not the code's own (a policy's reason, a webhook's). */
  reason?: string;
  /** The HTTP code when not the code's own. */
  status?: number;
  causes?: { message: string }[];
  /** A webhook's status details, passed on as they are. */
  details?: Record<string, unknown>;
}

export class AdmissionError extends Error {
  constructor(
    readonly code: AdmissionErrorCode,
    message: string,
    readonly info: AdmissionErrorInfo = {},
  ) {
    super(message);
    this.name = 'AdmissionError';
  }
}

export const forbidden = (target: Qualified, why: string): AdmissionError => new AdmissionError('Forbidden', why, { target });
export const badRequest = (message: string): AdmissionError => new AdmissionError('BadRequest', message);
export const internal = (message: string): AdmissionError => new AdmissionError('Internal', message);
