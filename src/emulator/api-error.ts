/**
 * An error answer of the emulator: carries its own HTTP status and the
 * service's error body shape `{ error: { code, message, details? } }`.
 */
import { ERROR_CODES } from '../contract/index.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }

  body(): { error: { code: string; message: string; details?: unknown } } {
    const error: { code: string; message: string; details?: unknown } = {
      code: this.code,
      message: this.message,
    };
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}

export const validationError = (message: string, details?: unknown): ApiError =>
  new ApiError(400, ERROR_CODES.validation, message, details);

export const notFound = (what: string): ApiError =>
  new ApiError(404, ERROR_CODES.notFound, `${what} not found`);
