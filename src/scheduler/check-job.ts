/**
 * The one check of a job file before anything is spent, for `validate`,
 * `plan` and `run`, CLI and library alike: the file and every item against
 * the model contracts (`checkJobFile`: every mistake at once) and, with a
 * service, the preflight (preflight.ts), whose problems a file with mistakes
 * gets in the same report. The preflight reads the journal the job runs
 * with: `journalPath`, else the one beside the job file.
 */
import {
  type CheckedJobFile,
  checkJobFile,
  defaultJournalPath,
  defaultModelCachePath,
  expansionOf,
  type JobItem,
  type LoadedJob,
  type LoadOptions,
  loadModelCatalog,
  type ModelCatalog,
  type ModelLister,
  type ValidatedJob,
} from '../job/index.js';
import { PlanItems } from './decide/plan-items.js';
import type { InfluencerLister } from './influencer-directory.js';
import { issuesBeforeSpending, Preflight } from './preflight.js';

/** What the check asks of the service: its contracts and the account's influencers. */
export type PreflightClient = ModelLister & InfluencerLister & { readonly baseUrl: string };

export interface CheckJobOptions extends LoadOptions {
  /**
   * The service, asked for once the file loaded (a file that does not load
   * opens nothing), before its first request. @default none: cached contracts only, no preflight
   */
  readonly service?: (job: LoadedJob) => Promise<PreflightClient>;
  /** Use the cached contracts only; the preflight still asks the service. @default false */
  readonly offline?: boolean;
  /** The contracts' cache; `null`: none. @default `.ibatch/models.json` beside the job file */
  readonly cacheFile?: string | null;
  /** The job, as soon as its file loaded without mistakes (see `checkJobFile`). */
  readonly onLoaded?: (job: LoadedJob) => void;
  /**
   * What receives each item, asked for once the contracts are known: a
   * caller that counts or groups items need not hold them. @default items are not kept
   */
  readonly onItemOf?: (
    job: LoadedJob,
    catalog: ModelCatalog,
  ) => Promise<((item: JobItem) => void) | undefined>;
}

/** A job that passed the check, with its preflight (undefined without a service). */
export interface JobCheckedBeforeSpending extends CheckedJobFile {
  readonly preflight: Preflight | undefined;
}

/** Throws `JobFileError` (exit 2) listing every problem, the preflight's included. */
export async function checkJobBeforeSpending(
  jobPath: string,
  options: CheckJobOptions,
): Promise<JobCheckedBeforeSpending> {
  const { service, offline, cacheFile, onItemOf, ...loadOptions } = options;
  let client: PreflightClient | undefined;
  let preflight: Preflight | undefined;
  let onItem: ((item: JobItem) => void) | undefined;
  const checked = await checkJobFile(jobPath, {
    ...loadOptions,
    catalog: async (job) => {
      client = await service?.(job);
      const { catalog } = await loadModelCatalog({
        cacheFile: cacheFile === undefined ? defaultModelCachePath(job.dir) : cacheFile,
        offline: offline ?? false,
        ...(client ? { lister: client, baseUrl: client.baseUrl } : {}),
      });
      if (client) preflight = new Preflight(job, catalog);
      onItem = await onItemOf?.(job, catalog);
      return catalog;
    },
    onItem: (item) => {
      preflight?.add(item);
      onItem?.(item);
    },
    serviceChecks: async (job) =>
      client && preflight
        ? issuesBeforeSpending(
            preflight,
            client,
            options.journalPath ?? defaultJournalPath(job.dir),
          )
        : [],
  });
  return { ...checked, preflight };
}

/** `checkJobBeforeSpending` against `client`, keeping every item: what a run and a quote of it work on. */
export async function validateBeforeSpending(
  jobPath: string,
  client: PreflightClient,
  options: Omit<CheckJobOptions, 'service' | 'onItemOf'> = {},
): Promise<ValidatedJob & { readonly preflight: Preflight }> {
  const items: JobItem[] = [];
  const { job, catalog, scan, preflight } = await checkJobBeforeSpending(jobPath, {
    ...options,
    service: async () => client,
    onItemOf: async () => (item) => items.push(item),
  });
  if (!preflight) throw new Error('a job checked against a service has its preflight');
  return { job, catalog, ...expansionOf(items, scan), preflight };
}

/** A job checked for a run: its items as the lean records `plan` keeps too (plan-items.ts). */
export interface LeanJob {
  readonly job: LoadedJob;
  readonly catalog: ModelCatalog;
  readonly items: PlanItems;
  readonly warnings: CheckedJobFile['scan']['warnings'];
  readonly preflight: Preflight;
}

/**
 * `checkJobBeforeSpending` against `client`, keeping a lean record of each
 * item, not the item: what `run` decides and drives on (a whole item is
 * expanded from the job again only when it is about to be sent).
 */
export async function checkForRun(
  jobPath: string,
  client: PreflightClient,
  options: Omit<CheckJobOptions, 'service' | 'onItemOf'> & {
    /**
     * Awaited before the first request to the service (the contracts, when
     * not cached); the keys it gives are kept whole by the scan (`PlanItems`).
     */
    readonly beforeService?: (job: LoadedJob) => Promise<ReadonlySet<string> | undefined>;
  } = {},
): Promise<LeanJob> {
  let items: PlanItems | undefined;
  let keepWhole: ReadonlySet<string> | undefined;
  const { beforeService, ...checkOptions } = options;
  const { job, catalog, scan, preflight } = await checkJobBeforeSpending(jobPath, {
    ...checkOptions,
    service: async (loaded) => {
      keepWhole = await beforeService?.(loaded);
      return client;
    },
    onItemOf: async (loaded, models) => {
      const lean = new PlanItems(loaded, models, undefined, keepWhole);
      items = lean;
      return (item) => lean.add(item);
    },
  });
  if (!preflight || !items) throw new Error('a job checked against a service has its preflight');
  return { job, catalog, items, warnings: scan.warnings, preflight };
}
