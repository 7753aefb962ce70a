/**
 * Model contracts, from `GET /models` (one read-only request) or from a disk
 * cache beside the job file (`.ibatch/models.json`, 1 hour by default).
 * `offline` uses the cache whatever its age and fails clearly without one.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { type Model, type ModelList, ModelSchema } from '../contract/index.js';
import {
  canonicalServiceUrl,
  EXIT,
  IbatchError,
  makeFolderSync,
  removeDeadWritersTemps,
  tempBeside,
} from '../shared/index.js';
import type { ModelCatalog } from './types.js';

/** How long cached model contracts are used before they are read again: one hour. */
export const DEFAULT_MODEL_CACHE_TTL_MS = 3_600_000;

export interface ModelLister {
  listModels(): Promise<ModelList>;
}

export interface CatalogOptions {
  /** Where contracts come from when the cache is missing or stale. @default none: the cache only */
  readonly lister?: ModelLister;
  /** Service the contracts belong to (the cache keeps one entry per canonical base URL). @default none: one entry for every service */
  readonly baseUrl?: string;
  /** Cache file; `null` disables the disk cache. @default null */
  readonly cacheFile?: string | null;
  /** Use the cache only (any age); never call the service. @default false */
  readonly offline?: boolean;
  /** @default 3600000 (DEFAULT_MODEL_CACHE_TTL_MS, one hour) */
  readonly ttlMs?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

export interface LoadedCatalog {
  readonly catalog: ModelCatalog;
  readonly from: 'cache' | 'service';
  /** When the contracts were fetched (ms since epoch). */
  readonly fetchedAt: number;
}

/** No model contracts could be had (offline without a cache). Exit 2. */
export class ModelCatalogError extends IbatchError {
  constructor(message: string) {
    super('no_model_contracts', message, EXIT.invalid);
  }
}

const CacheEntrySchema = z.object({ fetchedAt: z.number(), models: z.array(ModelSchema) });
const CacheFileSchema = z.object({
  version: z.literal(1),
  entries: z.record(z.string(), CacheEntrySchema),
});
type CacheFile = z.infer<typeof CacheFileSchema>;

export function defaultModelCachePath(jobDir: string): string {
  return join(jobDir, '.ibatch', 'models.json');
}

export function catalogOf(models: readonly Model[]): ModelCatalog {
  return new Map(models.map((m) => [m.id, m]));
}

export async function loadModelCatalog(options: CatalogOptions): Promise<LoadedCatalog> {
  const now = options.now ?? Date.now;
  const ttl = options.ttlMs ?? DEFAULT_MODEL_CACHE_TTL_MS;
  // Keyed by the service, not its spelling: `localhost` and `127.0.0.1` share one entry.
  const key = options.baseUrl ? canonicalServiceUrl(options.baseUrl) : 'default';
  const cache = options.cacheFile ? readCache(options.cacheFile) : undefined;
  const cached =
    cache?.entries[key] ??
    (options.offline
      ? Object.values(cache?.entries ?? {}).sort((a, b) => b.fetchedAt - a.fetchedAt)[0]
      : undefined);
  if (options.offline) {
    if (!cached) {
      throw new ModelCatalogError(
        `--offline needs cached model contracts, but ${options.cacheFile ?? 'the cache'} has none: run \`ibatch validate\` once online`,
      );
    }
    return { catalog: catalogOf(cached.models), from: 'cache', fetchedAt: cached.fetchedAt };
  }
  if (cached && now() - cached.fetchedAt < ttl) {
    return { catalog: catalogOf(cached.models), from: 'cache', fetchedAt: cached.fetchedAt };
  }
  if (!options.lister)
    throw new ModelCatalogError('no model contracts: no service to ask and no fresh cache');
  const { models } = await options.lister.listModels();
  const fetchedAt = now();
  if (options.cacheFile) {
    const next: CacheFile = {
      version: 1,
      entries: { ...(cache?.entries ?? {}), [key]: { fetchedAt, models } },
    };
    writeCache(options.cacheFile, next);
  }
  return { catalog: catalogOf(models), from: 'service', fetchedAt };
}

function readCache(file: string): CacheFile | undefined {
  try {
    const parsed = CacheFileSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : undefined; // a corrupt cache is just a miss
  } catch {
    return undefined;
  }
}

function writeCache(file: string, cache: CacheFile): void {
  try {
    makeFolderSync(dirname(file));
    removeDeadWritersTemps(file);
    const temp = tempBeside(file);
    writeFileSync(temp, `${JSON.stringify(cache)}\n`);
    renameSync(temp, file); // atomic: a concurrent reader sees the old or the new file
  } catch {
    // The cache is an optimisation: a read-only job directory must not fail validation.
  }
}
