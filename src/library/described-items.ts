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
  type LoadedJob,
  loadJob,
  loadModelCatalog,
  scanJob,
} from '../job/index.js';
import type { DescribedItems } from '../outputs/index.js';
import { filelessIdentity } from '../scheduler/index.js';

/**
 * The job's item keys and the identity hashes known without reading local
 * files (items naming none: `filelessIdentity`), or why they are unknown
 * (then no output counts as retired by the job file).
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
    const keys = new Set<string>();
    const identities = new Map<string, string>();
    scanJob(job, catalog, (item) => {
      keys.add(item.key);
      const identity = filelessIdentity(job, item);
      if (identity !== undefined) identities.set(item.key, identity);
    });
    return { keys, identities };
  } catch (error) {
    const why = isJobFileError(error)
      ? 'the job file does not expand (see `ibatch validate`)'
      : (error as Error).message;
    return { why };
  }
}

/**
 * The item keys of the job file at `jobPath`, for commands that work from
 * the journal and must not fail on a job file that no longer loads (`report`,
 * `review`): undefined then (no output counts as retired by the job file).
 */
export async function describedItemsOfFile(jobPath: string): Promise<DescribedItems | undefined> {
  let job: LoadedJob;
  try {
    job = loadJob(jobPath, { readsOutputsOnly: true });
  } catch {
    return undefined;
  }
  return (await describedKeysOf(job)).keys;
}
