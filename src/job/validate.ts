/**
 * The whole check of a job file: load (schema and structure), fetch or read
 * the model contracts, expand into items and check each against its model.
 * Read-only towards the service: at most one `GET /models`.
 */
import { type Expansion, expandJob } from './expand.js';
import { type LoadOptions, loadJob } from './load.js';
import { type CatalogOptions, defaultModelCachePath, loadModelCatalog } from './model-catalog.js';
import type { LoadedJob, ModelCatalog } from './types.js';

export interface ValidatedJob extends Expansion {
  readonly job: LoadedJob;
  readonly catalog: ModelCatalog;
}

export interface ValidateOptions extends LoadOptions, Omit<CatalogOptions, 'cacheFile'> {
  /** Model contracts given directly (tests, benchmarks): no service, no cache. */
  readonly models?: ModelCatalog;
  /** @default `.ibatch/models.json` beside the job file; `null` disables it */
  readonly cacheFile?: string | null;
}

/** Throws `JobFileError` (exit 2) listing every problem. */
export async function validateJob(
  path: string,
  options: ValidateOptions = {},
): Promise<ValidatedJob> {
  const job = loadJob(path, options);
  const catalog =
    options.models ??
    (
      await loadModelCatalog({
        ...options,
        cacheFile:
          options.cacheFile === undefined ? defaultModelCachePath(job.dir) : options.cacheFile,
      })
    ).catalog;
  return { job, catalog, ...expandJob(job, catalog) };
}
