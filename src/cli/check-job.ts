/**
 * What the commands given a job file share: the check of the file against
 * the service (`validate`, `plan`, `run --dry-run`) and how its mistakes and
 * warnings are printed (every command that loads a job file).
 */
import { resolve } from 'node:path';
import {
  formatIssues,
  isJobFileError,
  type JobIssue,
  type JobItem,
  type JobScan,
  type LoadedJob,
  type ModelCatalog,
} from '../job/index.js';
import { checkJobBeforeSpending, type Preflight } from '../scheduler/index.js';
import { EXIT, printableLines } from '../shared/index.js';
import type { CliIo } from './command.js';
import {
  type CommonOptions,
  type JobLimitOptions,
  jobLimitsOf,
  journalOption,
  type NextRunOptions,
} from './options.js';
import type { OpenedService } from './service.js';

export interface ValidateCommandOptions extends CommonOptions, JobLimitOptions {
  readonly offline?: boolean;
}

/** A job that passed every check: what `validate` prints and `plan` quotes. */
export interface CheckedJob {
  readonly job: LoadedJob;
  readonly catalog: ModelCatalog;
  readonly scan: JobScan;
}

/**
 * `checkJobBeforeSpending` for a command: the service opened (once the file
 * loaded) unless `--offline`, its contracts cached beside the job unless it
 * is the in-process emulator. The items are not kept: the function
 * `onItemOf` gives for the job, its contracts and the service receives each
 * one, so a 100,000-row job is counted or grouped without holding its items;
 * `preflight` (online) has noted their URLs. The service is the caller's to
 * close (closed here when the check throws).
 */
export async function checkJob(
  io: CliIo,
  jobPath: string,
  options: ValidateCommandOptions & NextRunOptions,
  openServiceFor: () => Promise<OpenedService>,
  onItemOf?: (
    job: LoadedJob,
    catalog: ModelCatalog,
    service: OpenedService | undefined,
  ) => Promise<(item: JobItem) => void>,
): Promise<{ checked: CheckedJob; service: OpenedService | undefined; preflight?: Preflight }> {
  let service: OpenedService | undefined;
  try {
    const { preflight, ...checked } = await checkJobBeforeSpending(resolve(io.cwd, jobPath), {
      displayPath: jobPath,
      limits: jobLimitsOf(options),
      ...journalOption(io, options),
      offline: Boolean(options.offline),
      ...(options.emulator ? { cacheFile: null } : {}),
      ...(options.offline
        ? {}
        : {
            service: async () => {
              service = await openServiceFor();
              return service.client;
            },
          }),
      onItemOf: async (job, catalog) => onItemOf?.(job, catalog, service),
    });
    return { checked, service, ...(preflight ? { preflight } : {}) };
  } catch (error) {
    await service?.close();
    throw error;
  }
}

/** Prints a JobFileError's issues (caret excerpts on a TTY) and sets exit 2. */
export function reportJobErrors(io: CliIo, error: unknown, json: boolean | undefined): boolean {
  if (!isJobFileError(error)) return false;
  if (json) io.stdout.write(`${JSON.stringify({ valid: false, issues: error.issues })}\n`);
  const errors = error.issues.filter((i) => i.severity === 'error').length;
  // Issues quote the job's values (a CSV cell): escaped for the terminal.
  io.stderr.write(
    `${printableLines(formatIssues(error.issues, { excerpt: Boolean(io.stderr.isTTY), source: error.source ?? '' }))}\n`,
  );
  io.stderr.write(
    `ibatch: invalid job file (${errors} problem${errors === 1 ? '' : 's'}); nothing was spent\n`,
  );
  io.exitCode = EXIT.invalid;
  return true;
}

export function printWarnings(io: CliIo, warnings: readonly JobIssue[], source: string): void {
  if (warnings.length === 0) return;
  io.stderr.write(
    `${printableLines(formatIssues(warnings, { excerpt: Boolean(io.stderr.isTTY), source }))}\n`,
  );
}
