/**
 * Structured logging via pino. JSON lines when not on a TTY (or with
 * `--log-format json`), a compact human format otherwise. Logs go to stderr so
 * `--json` documents on stdout stay clean. Every line passes through `redact`,
 * and pino's own `redact` removes credential-bearing keys wherever they sit.
 * Human lines show user input with its control characters escaped
 * (`printable`), and on a terminal an info line is one row: cut to its width.
 */
import { Writable } from 'node:stream';
import { type Logger, pino } from 'pino';
import { fitLine } from './fit-line.js';
import { printable, redact } from './redact.js';
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
  /**
   * Events a human line leaves out because the command says the same words
   * itself (`run`'s summary repeats `run.finished`). JSON lines keep them.
   */
  prettyOmits?: readonly string[];
}

/** A destination that may be a terminal, its width read at every line (it changes on resize). */
type Destination = NodeJS.WritableStream & { readonly isTTY?: boolean; readonly columns?: number };

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
  const destination: Destination = options.destination ?? process.stderr;
  const isTty = Boolean(destination.isTTY);
  const format = options.format ?? (isTty ? 'pretty' : 'json');
  const color = options.color ?? (isTty && !process.env.NO_COLOR);
  const omits = new Set(options.prettyOmits ?? []);
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      noteLogLine();
      const line = redact(chunk.toString('utf8'));
      if (format === 'json') destination.write(line);
      else {
        const columns = destination.isTTY ? destination.columns : undefined;
        const pretty = prettyLine(line, { color, omits, columns });
        if (pretty !== '') destination.write(pretty);
      }
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

/** Fields a human info line leaves out: the message names the item by its label. */
const MACHINE_FIELDS = new Set(['event', 'item', 'label']);
const INFO = 30;

interface PrettyOptions {
  readonly color: boolean;
  readonly omits: ReadonlySet<string>;
  /** The terminal's width: info lines are cut to it. */
  readonly columns: number | undefined;
}

/**
 * One record as a person reads it: `HH:MM:SS level message  field=value`.
 * On a terminal an info line (the per-item lines among them) is cut to one
 * row, shortening the item's `label` inside the message first so the
 * outcome at its end stays visible; a warning or an error is shown whole
 * (wrapping), since what it says must not be lost.
 */
function prettyLine(json: string, options: PrettyOptions): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return `${printable(json.replace(/\n$/, ''))}\n`;
  }
  const { level, time, msg, ...rest } = record;
  if (typeof rest.event === 'string' && options.omits.has(rest.event)) return '';
  const info = Number(level) <= INFO;
  const [name, tint] = LEVEL_NAMES[Number(level)] ?? ['log', ''];
  const stamp = new Date(Number(time)).toISOString().slice(11, 19);
  const extra = Object.entries(rest)
    .filter(([k]) => k !== 'label' && !(info && MACHINE_FIELDS.has(k)))
    .map(([k, v]) => `${k}=${printable(typeof v === 'string' ? v : JSON.stringify(v))}`)
    .join(' ');
  const head = `${stamp} ${name.padEnd(5)} `;
  let text = `${printable(String(msg ?? ''))}${extra ? `  ${extra}` : ''}`;
  if (info && options.columns !== undefined) {
    const label = typeof rest.label === 'string' ? printable(rest.label) : undefined;
    text = fitLine(text, options.columns - head.length, label);
  }
  const shown = options.color ? `${stamp} ${tint}${name.padEnd(5)}\x1b[0m ` : head;
  return `${shown}${text}\n`;
}
