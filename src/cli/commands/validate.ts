/**
 * `ibatch validate JOB`: checks the job file and every item's input against
 * the model contracts. Never spends credits: the only request is GET /models
 * (none with `--offline`, which reads the cached contracts).
 */
import { resolve } from 'node:path';
import {
  defaultJournalPath,
  defaultModelCachePath,
  formatIssues,
  isJobFileError,
  type JobIssue,
  type JobItem,
  type JobScan,
  type LoadedJob,
  loadJob,
  loadModelCatalog,
  type ModelCatalog,
  scanJob,
} from '../../job/index.js';
import { checkBeforeSpending, Preflight } from '../../scheduler/index.js';
import { EXIT } from '../../shared/index.js';
import type { CliIo, CommandModule } from '../command.js';
import { withExamples } from '../help.js';
import {
  addCommonOptions,
  addJobLimitOptions,
  type CommonOptions,
  type JobLimitOptions,
  jobLimitsOf,
  journalOption,
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
 * Loads, fetches contracts and expands. With a `service` the contracts come
 * from it (cached beside the job unless it is the in-process emulator). The
 * items are not kept: `itemsTo` (given the contracts) receives each one, so
 * a 100,000-row job is counted or grouped without holding its items.
 */
export async function checkJob(
  io: CliIo,
  jobPath: string,
  options: ValidateCommandOptions,
  openServiceFor: () => Promise<OpenedService>,
  itemsTo: (catalog: ModelCatalog, job: LoadedJob) => (item: JobItem) => void = () => () =>
    undefined,
): Promise<{ checked: CheckedJob; service: OpenedService | undefined }> {
  const job = loadJob(resolve(io.cwd, jobPath), {
    displayPath: jobPath,
    limits: jobLimitsOf(options),
  });
  const cacheFile = options.emulator ? null : defaultModelCachePath(job.dir);
  let service: OpenedService | undefined;
  try {
    if (!options.offline) service = await openServiceFor();
    const { catalog } = await loadModelCatalog({
      cacheFile,
      offline: Boolean(options.offline),
      ...(service ? { lister: service.client, baseUrl: service.baseUrl } : {}),
    });
    return {
      checked: { job, catalog, scan: scanJob(job, catalog, itemsTo(catalog, job)) },
      service,
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
  io.stderr.write(
    `${formatIssues(error.issues, { excerpt: Boolean(io.stderr.isTTY), source: error.source ?? '' })}\n`,
  );
  io.stderr.write(
    `ibatch: invalid job file (${errors} problem${errors === 1 ? '' : 's'}); nothing was spent\n`,
  );
  io.exitCode = EXIT.invalid;
  return true;
}

export function printWarnings(io: CliIo, warnings: readonly JobIssue[], source: string): void {
  if (warnings.length === 0) return;
  io.stderr.write(`${formatIssues(warnings, { excerpt: Boolean(io.stderr.isTTY), source })}\n`);
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
        let preflight: Preflight | undefined;
        const { checked, service } = await checkJob(
          io,
          jobPath,
          options,
          () => openService(io, options),
          (catalog, job) => {
            const noted = new Preflight(job, catalog);
            preflight = noted;
            return (item) => noted.add(item);
          },
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
