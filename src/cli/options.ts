/**
 * The options every service-talking command shares (`--emulator`,
 * `--base-url`, `--json`, `--log-format`), registered in one place so they
 * read the same everywhere.
 */
import path from 'node:path';
import { type Command, Option } from 'commander';
import {
  DEFAULT_JOB_LIMITS,
  type JobLimits,
  notifyUrlProblem,
  s3UrlProblem,
} from '../job/index.js';
import { isJournalUrl } from '../journal/index.js';
import { TRAINING_ESTIMATE_ENV } from '../plan/index.js';
import { assertRunId } from '../scheduler/index.js';
import { LOG_FORMATS, type LogFormat, UsageError } from '../shared/index.js';

export interface CommonOptions {
  /** Start the emulator in-process and use its first (funded) account. */
  readonly emulator?: boolean;
  /** Overrides IBATCH_BASE_URL. */
  readonly baseUrl?: string;
  /** One JSON document on stdout, nothing else. */
  readonly json?: boolean;
  /** Overrides IBATCH_LOG_FORMAT. */
  readonly logFormat?: LogFormat;
}

/** Adds `--emulator`, `--base-url URL`, `--json` and `--log-format` to a command. */
export function addCommonOptions(command: Command): Command {
  return command
    .option('--emulator', 'start the emulator in-process on a free loopback port and use it')
    .option('--base-url <url>', 'service base URL including /api/v1 (default: $IBATCH_BASE_URL)')
    .option('--json', 'print one JSON document on stdout')
    .addOption(
      new Option(
        '--log-format <format>',
        'log format on stderr (default: pretty on a TTY, json otherwise)',
      )
        .choices([...LOG_FORMATS])
        // After `choices` (which only lists them in --help): one line, exit 2.
        .argParser(oneOf('--log-format', LOG_FORMATS)),
    );
}

/** Ceilings on what a job file may ask for, for commands that load one. */
export interface JobLimitOptions {
  readonly maxItems?: number;
  readonly allowOutsideJobFolder?: boolean;
}

/** Adds `--max-items N` and `--allow-outside-job-folder` (validate, plan, run). */
export function addJobLimitOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--max-items <n>',
        `most items a job may expand into (default: ${DEFAULT_JOB_LIMITS.maxItems})`,
      ).argParser(integerAtLeast('--max-items', 1)),
    )
    .option(
      '--allow-outside-job-folder',
      "let upload globs be absolute or climb out of the job file's folder with ..",
    );
}

/** The flags' overrides of the default ceilings. */
export function jobLimitsOf(options: JobLimitOptions): Partial<JobLimits> {
  return {
    ...(options.maxItems !== undefined ? { maxItems: options.maxItems } : {}),
    ...(options.allowOutsideJobFolder ? { allowOutsideJobFolder: true } : {}),
  };
}

/** What `run` and `plan` share: which run comes next, and what it may spend. */
export interface NextRunOptions {
  readonly journal?: string;
  readonly runId?: string;
  readonly fresh?: true | string[];
  /** The old spelling of `--fresh` (all steps). */
  readonly new?: boolean;
  readonly maxSpend?: number;
  readonly serviceMoved?: boolean;
}

/** Adds `--journal`, `--run-id`, `--fresh [steps...]`, `--new`, `--max-spend` and `--service-moved` (run, plan). */
export function addNextRunOptions(command: Command): Command {
  return command
    .option(
      '--journal <path>',
      'journal file (default: $IBATCH_JOURNAL or .ibatch/journal.db beside the job)',
    )
    .addOption(
      new Option(
        '--run-id <id>',
        'name the run: reproducible idempotency keys on another machine (printable, at most 100 characters)',
      ).argParser(runIdValue('--run-id')),
    )
    .option(
      '--fresh [steps...]',
      'make the done items of these steps again with new keys (all steps when none is named); an unfinished run is finished first',
    )
    .option('--new', 'old spelling of --fresh (all steps)')
    .addOption(
      new Option(
        '--max-spend <credits>',
        'most credits this invocation may commit (exit 3 when reached; the next run continues)',
      ).argParser(positiveNumber('--max-spend')),
    )
    .option(
      '--service-moved',
      "the job's unfinished run was made on another base URL that is this same service at a new address: resume it here with the same idempotency keys (without it such a run is refused, exit 2)",
    );
}

/** `--fresh a b`, `--fresh a,b`, `--fresh` (every step) or the old `--new`. */
export function freshOption(options: NextRunOptions): { fresh?: true | readonly string[] } {
  if (options.fresh === true || (options.new && options.fresh === undefined))
    return { fresh: true };
  if (options.fresh === undefined) return {};
  const steps = options.fresh.flatMap((s) => s.split(',')).map((s) => s.trim());
  return { fresh: steps.filter((s) => s !== '') };
}

/** `--journal`, else IBATCH_JOURNAL, else (nothing here) the default beside the job. A `postgres://` URL stays as it is. */
export function journalOption(
  io: { readonly env: NodeJS.ProcessEnv; readonly cwd: string },
  options: { readonly journal?: string },
): { journalPath?: string } {
  const explicit = options.journal ?? io.env.IBATCH_JOURNAL;
  return explicit ? { journalPath: journalLocation(io.cwd, explicit) } : {};
}

/** A journal file resolved against `cwd`; a PostgreSQL journal's `postgres://` URL as it is. */
export function journalLocation(cwd: string, journal: string): string {
  return isJournalUrl(journal) ? journal : path.resolve(cwd, journal);
}

/** `$IBATCH_TRAINING_ESTIMATE` (credits of one training while none is charged yet), when set. */
export function trainingEstimateOption(io: { readonly env: NodeJS.ProcessEnv }): {
  trainingEstimate?: number;
} {
  const value = io.env[TRAINING_ESTIMATE_ENV];
  if (value === undefined || value === '') return {};
  return { trainingEstimate: positiveNumber(`$${TRAINING_ESTIMATE_ENV}`)(value) };
}

/** Whether to colour output on this stream (a TTY, and NO_COLOR unset). */
export function useColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return Boolean(stream.isTTY) && !env.NO_COLOR;
}

/**
 * Flag value parsers for commander's `argParser`. A bad value is a
 * {@link UsageError} (exit 2, one line, no stack) naming the flag and the
 * expected form, e.g. "Expected `--time-scale` to be a number > 0, got `0`".
 */
export function positiveNumber(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n <= 0) {
      throw badFlag(flag, 'a number > 0', value);
    }
    return n;
  };
}

export function integerAtLeast(flag: string, min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isInteger(n) || n < min) {
      throw badFlag(flag, `an integer >= ${min}`, value);
    }
    return n;
  };
}

export function oneOf<T extends string>(flag: string, choices: readonly T[]): (value: string) => T {
  return (value) => {
    const found = choices.find((choice) => choice === value);
    if (found === undefined) throw badFlag(flag, `one of ${choices.join(', ')}`, value);
    return found;
  };
}

/** A run id (non-empty, printable, at most 100 characters; the rule lives in the scheduler). */
export function runIdValue(flag: string): (value: string) => string {
  return (value) => {
    assertRunId(value, flag);
    return value;
  };
}

/** `--deliver` / `--to` values: an `s3://BUCKET/PREFIX` URL, else exit 2 naming the flag. */
export function s3UrlValue(flag: string): (value: string) => string {
  return (value) => {
    const problem = s3UrlProblem(value);
    if (problem) throw new UsageError(`\`${flag}\` ${problem}`);
    return value;
  };
}

/** The repeatable `--notify URL`: a bad URL is exit 2 before anything runs. */
export function notifyFlag(value: string, previous: string[] | undefined): string[] {
  const problem = notifyUrlProblem(value);
  // The value is not quoted back: a refused URL may carry a user name and password.
  if (problem) throw new UsageError(`\`--notify\` ${problem}`);
  return [...(previous ?? []), value];
}

function badFlag(flag: string, expected: string, got: string): UsageError {
  return new UsageError(`Expected \`${flag}\` to be ${expected}, got \`${got}\``);
}
