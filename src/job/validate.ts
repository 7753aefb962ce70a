/**
 * The whole check of a job file: load (schema and structure), fetch or read
 * the model contracts, expand into items and check each against its model.
 * Every mistake of the file is reported at once: a phase that finds mistakes
 * does not stop the next ones, which check what they still can (see
 * `readJob` and `scanSteps`). Read-only towards the service: at most one
 * `GET /models`, and the caller's `serviceChecks` when the file has mistakes.
 */
import { type Expansion, expansionOf, type JobScan, scanSteps } from './expand.js';
import { JobFileError, type JobIssue } from './issues.js';
import { type LoadOptions, readJob } from './load.js';
import { type CatalogOptions, defaultModelCachePath, loadModelCatalog } from './model-catalog.js';
import type { JobItem, LoadedJob, ModelCatalog } from './types.js';

export interface CheckedJobFile {
  readonly job: LoadedJob;
  readonly catalog: ModelCatalog;
  readonly scan: JobScan;
}

export interface CheckJobFileOptions extends LoadOptions {
  /** The model contracts, asked for once the file has loaded (the service or its cache). */
  readonly catalog: (job: LoadedJob) => Promise<ModelCatalog>;
  /**
   * The job, as soon as its file loaded without mistakes (before the model
   * contracts are asked for): what a caller announcing the outcome needs even
   * when the service then fails.
   */
  readonly onLoaded?: (job: LoadedJob) => void;
  /** Each item as it is made (see `scanJob`: act on them only once this returns). */
  readonly onItem?: (item: JobItem) => void;
  /**
   * The checks of what the job names on the service (the preflight), run only
   * when the file has mistakes so that theirs come in the same report. A
   * valid file's callers run them where they need them (after the journal opens).
   */
  readonly serviceChecks?: (job: LoadedJob, catalog: ModelCatalog) => Promise<readonly JobIssue[]>;
}

/** Throws `JobFileError` (exit 2) listing every problem, sorted by position. */
export async function checkJobFile(
  path: string,
  options: CheckJobFileOptions,
): Promise<CheckedJobFile> {
  const reading = readJob(path, options);
  const { job } = reading;
  const issues = [...reading.issues];
  const failed = () => issues.some((i) => i.severity === 'error');
  // Nothing left to check against the contracts: no request for them.
  if (!job || (failed() && job.steps.length === 0)) throw new JobFileError(issues, reading.text);
  if (!failed()) options.onLoaded?.(job);
  let catalog: ModelCatalog;
  try {
    catalog = await options.catalog(job);
  } catch (error) {
    // The file's own mistakes are the answer; without contracts, the rest waits.
    if (failed()) throw new JobFileError(issues, reading.text);
    throw error;
  }
  const scan = scanSteps(job, catalog, options.onItem ?? (() => undefined));
  issues.push(...scan.issues);
  if (failed()) {
    if (options.serviceChecks) issues.push(...(await options.serviceChecks(job, catalog)));
    throw new JobFileError(issues, reading.text);
  }
  return { job, catalog, scan: { steps: scan.steps, warnings: issues } };
}

export interface ValidatedJob extends Expansion {
  readonly job: LoadedJob;
  readonly catalog: ModelCatalog;
}

export interface ValidateOptions extends LoadOptions, Omit<CatalogOptions, 'cacheFile'> {
  /** Model contracts given directly (tests, benchmarks): no service, no cache. @default none: read through the cache */
  readonly models?: ModelCatalog;
  /** As `CheckJobFileOptions.onLoaded`. @default none */
  readonly onLoaded?: (job: LoadedJob) => void;
  /** @default `.ibatch/models.json` beside the job file (`defaultModelCachePath`); `null` disables it */
  readonly cacheFile?: string | null;
  /** As `CheckJobFileOptions.serviceChecks`, given the items made. @default none */
  readonly serviceChecks?: (
    job: LoadedJob,
    catalog: ModelCatalog,
    items: readonly JobItem[],
  ) => Promise<readonly JobIssue[]>;
}

/** Throws `JobFileError` (exit 2) listing every problem. */
export async function validateJob(
  path: string,
  options: ValidateOptions = {},
): Promise<ValidatedJob> {
  const items: JobItem[] = [];
  const { serviceChecks, ...rest } = options;
  const { job, catalog, scan } = await checkJobFile(path, {
    ...rest,
    catalog: async (job) =>
      options.models ??
      (
        await loadModelCatalog({
          ...options,
          cacheFile:
            options.cacheFile === undefined ? defaultModelCachePath(job.dir) : options.cacheFile,
        })
      ).catalog,
    onItem: (item) => items.push(item),
    ...(serviceChecks
      ? { serviceChecks: (job, catalog) => serviceChecks(job, catalog, items) }
      : {}),
  });
  return { job, catalog, ...expansionOf(items, scan) };
}
