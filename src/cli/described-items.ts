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
  loadModelCatalog,
  scanJob,
} from '../job/index.js';

/** The job's item keys, or why they are unknown (then no output counts as retired by the job file). */
export type DescribedKeys =
  | { readonly keys: ReadonlySet<string> }
  | { readonly keys?: undefined; readonly why: string };

export async function describedKeysOf(job: LoadedJob): Promise<DescribedKeys> {
  try {
    const { catalog } = await loadModelCatalog({
      cacheFile: defaultModelCachePath(job.dir),
      offline: true,
    });
    const keys = new Set<string>();
    scanJob(job, catalog, (item) => keys.add(item.key));
    return { keys };
  } catch (error) {
    const why = isJobFileError(error)
      ? 'the job file does not expand (see `ibatch validate`)'
      : (error as Error).message;
    return { why };
  }
}
