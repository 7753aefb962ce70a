/**
 * `ibatch validate JOB`: checks the job file and every item's input against
 * the model contracts. Never spends credits: the only request is GET /models
 * (none with `--offline`, which reads the cached contracts).
 */
import { resolve } from 'node:path';
import {
  checkJobFile,
  defaultJournalPath,
  defaultModelCachePath,
  formatIssues,
  isJobFileError,
  type JobIssue,
  type JobItem,
  type JobScan,
  type LoadedJob,
  loadModelCatalog,
  type ModelCatalog,
} from '../../job/index.js';
import { checkBeforeSpending, issuesBeforeSpending, Preflight } from '../../scheduler/index.js';
import { EXIT, printableLines } from '../../shared/index.js';
import type { CliIo, CommandModule } from '../command.js';
import { withExamples } from '../help.js';
import {
  addCommonOptions,
  addJobLimitOptions,
  type CommonOptions,
  type JobLimitOptions,
  jobLimitsOf,
  journalOption,
  type NextRunOptions,
} from '../options.js';
import { type OpenedService, openService } from '../service.js';

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
 * Loads, fetches contracts and expands (`checkJobFile`: every mistake at
 * once). With a `service` the contracts come from it (cached beside the job
 * unless it is the in-process emulator), and a file with mistakes gets the
 * preflight's too, in the same report. The items are not kept: the
 * function `onItemOf` gives for the job, its contracts and the service receives each one,
 * so a 100,000-row job is counted or grouped without holding its items;
 * `preflight` (online) has noted their URLs.
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
  let preflight: Preflight | undefined;
  let onItem: ((item: JobItem) => void) | undefined;
  const journalPathOf = (job: LoadedJob) =>
    journalOption(io, options).journalPath ?? defaultJournalPath(job.dir);
  try {
    const checked = await checkJobFile(resolve(io.cwd, jobPath), {
      displayPath: jobPath,
      limits: jobLimitsOf(options),
      catalog: async (job) => {
        if (!options.offline) service = await openServiceFor();
        const { catalog } = await loadModelCatalog({
          cacheFile: options.emulator ? null : defaultModelCachePath(job.dir),
          offline: Boolean(options.offline),
          ...(service ? { lister: service.client, baseUrl: service.baseUrl } : {}),
        });
        if (service) preflight = new Preflight(job, catalog);
        onItem = await onItemOf?.(job, catalog, service);
        return catalog;
      },
      onItem: (item) => {
        preflight?.add(item);
        onItem?.(item);
      },
      serviceChecks: async (job) =>
        service && preflight
          ? issuesBeforeSpending(preflight, service.client, journalPathOf(job))
          : [],
    });
    return {
      checked,
      service,
      ...(preflight ? { preflight } : {}),
    };
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

export const validateCommand: CommandModule = {
  register(program, io) {
    addCommonOptions(
      addJobLimitOptions(
        withExamples(program.command('validate'), [
          ['validate campaign.yaml', 'every mistake of the file at once, with file:line:col'],
          ['validate campaign.yaml --emulator', "against the built-in emulator's models"],
          ['validate campaign.yaml --offline --json', 'cached contracts, no request; JSON'],
        ]),
      )
        .argument('<job>', 'job file (YAML)')
        .option(
          '--offline',
          'use the cached model contracts (.ibatch/models.json); no request at all',
        )
        .description(
          'check a job file and every input against the model contracts (never spends credits)',
        ),
    ).action(async (jobPath: string, options: ValidateCommandOptions) => {
      try {
        // Online, what `run` checks before spending is checked too (items noted as scanned).
        const { checked, service, preflight } = await checkJob(io, jobPath, options, () =>
          openService(io, options),
        );
        try {
          if (service && preflight) {
            const journal =
              journalOption(io, {}).journalPath ?? defaultJournalPath(checked.job.dir);
            await checkBeforeSpending(preflight, service.client, journal);
          }
        } finally {
          await service?.close();
        }
        const { job, scan } = checked;
        const { warnings } = scan;
        printWarnings(io, warnings, job.source.text);
        const items = scan.steps.reduce((sum, step) => sum + step.items, 0);
        const outputs = scan.steps.reduce((sum, step) => sum + step.outputs, 0);
        if (options.json) {
          const steps = scan.steps.map(({ id, items, outputs }) => ({ id, items, outputs }));
          io.stdout.write(
            `${JSON.stringify({ valid: true, name: job.name, items, outputs, steps, warnings })}\n`,
          );
          return;
        }
        io.stdout.write(
          `${jobPath}: valid (${job.steps.length} step${job.steps.length === 1 ? '' : 's'}, ${items} items, ${outputs} outputs)\n`,
        );
      } catch (error) {
        if (!reportJobErrors(io, error, options.json)) throw error;
      }
    });
  },
};
