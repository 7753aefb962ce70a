/**
 * An error answer of the emulator, in the style of hono's HTTPException: it
 * carries its error code, takes its HTTP status from the contract's
 * `STATUS_FOR_CODE` (never a status written next to a code), and builds its
 * own response body `{ error: { code, message, details? } }`. Its exit code
 * and retryability are what the client will make of that status (the
 * contract's failure table), so both sides read one mapping.
 */
import type { ServerResponse } from 'node:http';
import {
  ERROR_CODES,
  type ErrorBody,
  type KnownErrorCode,
  meaningOfStatus,
  STATUS_FOR_CODE,
} from '../contract/index.js';
import { IbatchError } from '../shared/index.js';
import type { Answer } from './call.js';
import { sendJson } from './http-util.js';

/**
 * Codes of the emulator's own surfaces that are not the service's API (the
 * presigned upload store, the admin API), so not in the contract's table.
 */
export const LOCAL_STATUS_FOR_CODE = {
  method_not_allowed: 405,
  upload_expired: 403,
  forbidden: 403,
} as const;
export type LocalErrorCode = keyof typeof LOCAL_STATUS_FOR_CODE;

export type EmulatorErrorCode = KnownErrorCode | LocalErrorCode;

export type ServerErrorStatus = 500 | 502 | 503 | 504;

export class EmulatorHttpError extends IbatchError {
  readonly status: number;
  readonly details: unknown;

  /**
   * `serverStatus`: a specific 5xx for an `internal_error` (the contract
   * gives every 5xx that one code); injected faults use 502 and 503.
   */
  constructor(
    code: EmulatorErrorCode,
    message: string,
    details?: unknown,
    serverStatus?: ServerErrorStatus,
  ) {
    const status =
      code === ERROR_CODES.internal && serverStatus ? serverStatus : statusForCode(code);
    const meaning = meaningOfStatus(status);
    super(code, message, meaning.exitCode, { retryable: meaning.retryable });
    this.status = status;
    this.details = details;
  }

  body(): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message };
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }

  answer(): Answer {
    return { status: this.status, body: this.body() };
  }

  /** Writes the whole response. */
  send(res: ServerResponse, headers: Record<string, string | number> = {}): void {
    sendJson(res, this.status, this.body(), headers);
  }
}

function statusForCode(code: EmulatorErrorCode): number {
  return code in LOCAL_STATUS_FOR_CODE
    ? LOCAL_STATUS_FOR_CODE[code as LocalErrorCode]
    : STATUS_FOR_CODE[code as KnownErrorCode];
}

export const validationError = (message: string, details?: unknown): EmulatorHttpError =>
  new EmulatorHttpError(ERROR_CODES.validation, message, details);

export const notFound = (what: string, details?: unknown): EmulatorHttpError =>
  new EmulatorHttpError(ERROR_CODES.notFound, `${what} not found`, details);
