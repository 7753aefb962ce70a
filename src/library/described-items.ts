/**
 * The items a job file describes now, as the commands that are given the job
 * file (`status`, `export`, `deliver`, `review`, `approve`, `reject`) need
 * them to tell current outputs from retired ones (src/outputs/current.ts).
 * Expanded offline with the cached model contracts: these commands send
 * nothing to the service.
 */
import {
  defaultModelCachePath,
  isJobFileError,
  type JobItem,
  type LoadedJob,
  loadJob,
  loadModelCatalog,
  scanJob,
} from '../job/index.js';
import type { Journal } from '../journal/index.js';
import { type DescribedItems, EVERY_ITEM } from '../outputs/index.js';
import {
  filelessIdentity,
  identityOf,
  inputFingerprint,
  type KnownJobFile,
  knownJobFile,
  prepareJobFiles,
} from '../scheduler/index.js';

/**
 * The job's item keys and their identity hashes (`itemIdentity`, the one
 * `plan` and `run` compare: the local files an item names are hashed, so an
 * edited reference image counts as a change), or why they are unknown (then
 * no output counts as retired by the job file). A local file that cannot be
 * read leaves the identities out (no item is judged changed).
 */
export type DescribedKeys =
  | { readonly keys: ReadonlySet<string>; readonly identities: ReadonlyMap<string, string> }
  | { readonly keys?: undefined; readonly why: string };

export async function describedKeysOf(job: LoadedJob): Promise<DescribedKeys> {
  try {
    const { catalog } = await loadModelCatalog({
      cacheFile: defaultModelCachePath(job.dir),
      offline: true,
    });
    // Keys and identities as the scan goes: a job of 100,000 rows is not
    // held whole. Only the items naming local files (or a job-local
    // influencer) wait for the files' hashes.
    const keys = new Set<string>();
    const identities = new Map<string, string>();
    const withFiles: JobItem[] = [];
    scanJob(job, catalog, (item) => {
      keys.add(item.key);
      const identity = filelessIdentity(job, item);
      if (identity === undefined) withFiles.push(item);
      else identities.set(item.key, identity);
    });
    const files = await prepareJobFiles(job, withFiles).catch(() => undefined);
    if (!files) return { keys, identities: new Map() };
    const identity = identityOf(job, files);
    for (const item of withFiles) identities.set(item.key, identity(item));
    return { keys, identities };
  } catch (error) {
    const why = isJobFileError(error)
      ? 'the job file does not expand (see `ibatch validate`)'
      : (error as Error).message;
    return { why };
  }
}

/**
 * What the journal knows of `job` as it is now, without expanding it
 * (src/scheduler/job-facts.ts), or undefined: then it is to be expanded.
 */
export async function knownFromJournal(
  job: LoadedJob,
  journal: Pick<Journal, 'listRuns'>,
): Promise<KnownJobFile | undefined> {
  return knownJobFile(journal, job.name, await inputFingerprint(job));
}

/**
 * The item keys of the job file at `jobPath`, for commands that work from
 * the journal and must not fail on a job file that no longer loads (`report`,
 * `review`): undefined then (no output counts as retired by the job file).
 * With the journal: every item, when its facts say the unchanged job file
 * describes every item of its runs (`knownFromJournal`).
 */
export async function describedItemsOfFile(
  jobPath: string,
  journal?: Pick<Journal, 'listRuns'>,
): Promise<DescribedItems | undefined> {
  let job: LoadedJob;
  try {
    job = loadJob(jobPath, { readsOutputsOnly: true });
  } catch {
    return undefined;
  }
  if (journal && (await knownFromJournal(job, journal))) return EVERY_ITEM;
  return (await describedKeysOf(job)).keys;
}
