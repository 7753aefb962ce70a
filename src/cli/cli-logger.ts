/**
 * The CLI's logger: on stderr (or the run's chosen destination), pretty on a
 * terminal and JSON otherwise unless `--log-format`/IBATCH_LOG_FORMAT says,
 * at IBATCH_LOG_LEVEL, secrets redacted. Every command that can wait or
 * warn (a service's, and the readers' that write a manifest or deliver)
 * logs through one, so a wait says what it waits for whatever the command.
 */
import {
  createLogger,
  LOG_FORMATS,
  type LogFormat,
  type Logger,
  UsageError,
} from '../shared/index.js';
import type { CliIo } from './command.js';

export interface CliLoggerOptions {
  /** Overrides IBATCH_LOG_FORMAT (`--log-format`). */
  readonly logFormat?: LogFormat | undefined;
  /** Where logs go instead of stderr (the run's progress display owns the terminal). */
  readonly logDestination?: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Events the human log lines leave out (the command prints their words itself). */
  readonly prettyOmits?: readonly string[];
}

export function cliLogger(io: CliIo, options: CliLoggerOptions = {}): Logger {
  return createLogger({
    format: logFormat(io, options),
    destination: options.logDestination ?? io.stderr,
    // The CLI's environment is `io.env` (an in-process CLI has its own).
    ...(io.env.IBATCH_LOG_LEVEL ? { level: io.env.IBATCH_LOG_LEVEL } : {}),
    ...(options.prettyOmits ? { prettyOmits: options.prettyOmits } : {}),
  });
}

function logFormat(io: CliIo, options: CliLoggerOptions): LogFormat | undefined {
  const value = options.logFormat ?? io.env.IBATCH_LOG_FORMAT;
  if (value === undefined || value === '') return undefined;
  const format = LOG_FORMATS.find((known) => known === value);
  if (format) return format;
  throw new UsageError(`Expected IBATCH_LOG_FORMAT to be pretty or json, got \`${value}\``);
}
