/**
 * Structured logging via pino. JSON lines when not on a TTY (or with
 * `--log-format json`), a compact human format otherwise. Logs go to stderr so
 * `--json` documents on stdout stay clean. Every line passes through `redact`,
 * and pino's own `redact` removes credential-bearing keys wherever they sit.
 */
import { Writable } from 'node:stream';
import { type Logger, pino } from 'pino';
import { redact } from './redact.js';
import { noteLogLine } from './waits.js';

export type { Logger } from 'pino';
export const LOG_FORMATS = ['pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LoggerOptions {
  /** @default 'info' */
  level?: string;
  /** @default pretty on a TTY, json otherwise */
  format?: LogFormat;
  /** @default process.stderr */
  destination?: NodeJS.WritableStream;
  /** @default !process.env.NO_COLOR && destination is a TTY */
  color?: boolean;
}

const REDACT_PATHS = [
  'apiKey',
  '*.apiKey',
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'headers.Authorization',
  '*.headers.Authorization',
];

export function createLogger(options: LoggerOptions = {}): Logger {
  const destination = options.destination ?? process.stderr;
  const isTty = Boolean((destination as { isTTY?: boolean }).isTTY);
  const format = options.format ?? (isTty ? 'pretty' : 'json');
  const color = options.color ?? (isTty && !process.env.NO_COLOR);
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      noteLogLine();
      const line = redact(chunk.toString('utf8'));
      destination.write(format === 'json' ? line : prettyLine(line, color));
      done();
    },
  });
  return pino(
    {
      level: options.level ?? process.env.IBATCH_LOG_LEVEL ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      base: undefined,
    },
    sink,
  );
}

/** A logger that drops everything: the default for library callers. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

const LEVEL_NAMES: Record<number, [string, string]> = {
  10: ['trace', '\x1b[90m'],
  20: ['debug', '\x1b[90m'],
  30: ['info', '\x1b[36m'],
  40: ['warn', '\x1b[33m'],
  50: ['error', '\x1b[31m'],
  60: ['fatal', '\x1b[41m'],
};

function prettyLine(json: string, color: boolean): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const { level, time, msg, ...rest } = record;
  const [name, tint] = LEVEL_NAMES[Number(level)] ?? ['log', ''];
  const stamp = new Date(Number(time)).toISOString().slice(11, 19);
  const extra = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  const label = color ? `${tint}${name.padEnd(5)}\x1b[0m` : name.padEnd(5);
  return `${stamp} ${label} ${String(msg ?? '')}${extra ? `  ${extra}` : ''}\n`;
}
