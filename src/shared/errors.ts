/**
 * Base class of every error ibatch raises on purpose. Each subclass has a
 * stable `code` (for scripts and tests) and the process exit code it maps to;
 * only the CLI entry point turns them into `process.exit`.
 */
import { EXIT, type ExitCode } from './exit-codes.js';

export class IbatchError extends Error {
  readonly code: string;
  readonly exitCode: ExitCode;

  constructor(code: string, message: string, exitCode: ExitCode, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.exitCode = exitCode;
  }
}

/** Bad arguments, flags or configuration: nothing was spent. */
export class UsageError extends IbatchError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('usage', message, EXIT.invalid, options);
  }
}

/** The run stopped because a signal asked it to. */
export class InterruptedError extends IbatchError {
  constructor(message = 'interrupted') {
    super('interrupted', message, EXIT.interrupted);
  }
}

export function isIbatchError(error: unknown): error is IbatchError {
  return error instanceof IbatchError;
}
