/**
 * The output folder's `manifest.jsonl` as a record of what is done, item by
 * item: an item the journal does not show done (adoption-candidates.ts says
 * which) that the manifest lists as succeeded, with every file still there
 * and unchanged, is recorded in one finished run (`adopted-…`), uncharged, so
 * the desired-state comparison sees it done and nothing already paid for is
 * paid again. That covers a lost journal (missing, emptied after its WAL was
 * deleted, or holding no run of this job on this service) and a stale one
 * (an older copy restored beside a newer folder). Everything else is made by
 * the run as usual.
 *
 * A job-local influencer the manifest's rows were made with (`influencer`,
 * `influencerId`, `influencerConfig`) is adopted too, when its configuration
 * is still the job file's and the account still lists it ready: an item still
 * to be made with it reuses it instead of paying for a training again.
 *
 * One decision for both commands: `readAdoption` decides, reading only;
 * `run` records it (`recordAdoption`), `plan` quotes the next run as if it
 * were recorded (adopted-reader.ts). So `plan` quotes what `run` then charges.
 *
 * The manifest does not record everything an item's identity covers (only
 * step, model and prompt are compared, and the template values of an item
 * named by a row key, whose key alone does not tell them): an item is adopted as the job file
 * describes it now. An item adopted wrongly is fixed with `--fresh`; an item
 * not adopted costs one more create. Only files that are intact count.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { JobItem, LoadedJob } from '../job/index.js';
import { type AdoptedItem, idempotencyKey, type Journal, newRunId } from '../journal/index.js';
import { isRowOfJob, MANIFEST_JSONL, readManifestUncovered } from '../outputs/index.js';
import type { Logger } from '../shared/index.js';
import {
  type AdoptedInfluencer,
  adoptedInfluencers,
  type InfluencerAdoptionInput,
} from './adopt-influencers.js';
import {
  type CandidateJournal,
  itemsLeftToManifest,
  keptByJournal,
  notDone,
} from './adoption-candidates.js';
import { toNewItem } from './decide/item-records.js';
import { latestGroups, type Verified, verifiedOutputs } from './manifest-groups.js';
import { assertRunId } from './run-id.js';

/** What a lost journal's adoption records (see the module comment). */
export interface Adoption {
  readonly jobName: string;
  readonly service: string;
  /** The adopted run's id (`adopted-…`); recorded only when `items` has any. */
  readonly runId: string;
  readonly items: readonly AdoptedItem[];
  readonly influencers: readonly AdoptedInfluencer[];
  /**
   * Items an unfinished run holds, never attempted, that the adoption takes
   * out of it: the resume does not make them again.
   */
  readonly release: readonly { readonly runId: string; readonly itemKey: string }[];
  /** The job's items the manifest lists that the journal does not show done, adopted or not. */
  readonly listed: number;
}

export interface AdoptionInput extends InfluencerAdoptionInput {
  readonly outputDir: string;
  /** The service base URL the run spends on (`scope`: with the account). */
  readonly service: string;
  /** The job file's whole items of these keys, in job order (`plan` scans the job for them). */
  readonly jobItems: (keys: ReadonlySet<string>) => ReadonlyMap<string, JobItem>;
  /** An item's identity hash (src/scheduler/decide/item-identity.ts). */
  readonly identity: (item: JobItem) => string;
}

/** The journal reads the decision needs (a read-only journal offers them). */
export type AdoptionJournal = CandidateJournal & Pick<Journal, 'findInfluencer'>;

/**
 * What the next run adopts from `<outputDir>/manifest.jsonl` (see the module
 * comment), reading only; undefined when the manifest shows nothing done
 * that the journal does not (`journal` undefined: there is no journal yet).
 * `jobKeys`: the job file's item keys.
 */
export async function readAdoption(
  journal: AdoptionJournal | undefined,
  job: LoadedJob,
  jobKeys: () => ReadonlySet<string>,
  input: AdoptionInput,
): Promise<Adoption | undefined> {
  if (!existsSync(path.join(input.outputDir, MANIFEST_JSONL))) return undefined;
  const keys = jobKeys();
  // Only this job's rows: jobs sharing the folder may have items of the same
  // key (a row naming no job, of an older manifest, is taken as the job's).
  // Rows of items the journal shows made by the row's run are not read: a
  // resume of a large run would otherwise validate every row it wrote.
  const { rows, coveredLast } = readManifestUncovered(
    input.outputDir,
    (row) => isRowOfJob(row, job.name) && (keys.has(row.item) || row.influencerId !== undefined),
    keptByJournal(journal, job.name, keys, input.service),
    (line) =>
      input.logger.warn({ line }, `${MANIFEST_JSONL} line ${line} is not a manifest row: skipped`),
  );
  if (rows.length === 0) return undefined;
  const groups = latestGroups(
    rows.filter((row) => keys.has(row.item) && !coveredLast.has(row.item)),
  );
  const left = itemsLeftToManifest(journal, job.name, input.service, groups);
  const whole = withSources(
    left.size > 0 ? input.jobItems(new Set(left.keys())) : new Map(),
    groups,
    input,
  );
  const candidates = notDone(left, whole, input.identity);
  // A `from:` item's source is verified too, adopted or not: the item was made from its output.
  const verified = new Map<string, Verified>();
  for (const [key, item] of whole) {
    const group = groups.get(key);
    const outputs = group && (await verifiedOutputs(item, group, input.outputDir));
    if (outputs) verified.set(key, outputs);
  }
  const runId = `adopted-${newRunId()}`;
  assertRunId(runId);
  const items = adoptedItems(job, candidates, whole, verified, runId, input.identity);
  const influencers = await adoptedInfluencers(journal, job, rows, input);
  if (items.length === 0 && influencers.length === 0) return undefined;
  const release = items.flatMap(({ item }) => {
    const from = candidates.get(item.itemKey)?.release;
    return from ? [{ runId: from, itemKey: item.itemKey }] : [];
  });
  return {
    jobName: job.name,
    service: input.service,
    runId,
    items,
    release,
    influencers,
    listed: candidates.size,
  };
}

/**
 * `whole` with the job items the `from:` items in it were made from, as far
 * as the manifest lists them (their outputs name the source generation).
 */
function withSources(
  whole: ReadonlyMap<string, JobItem>,
  groups: ReadonlyMap<string, unknown>,
  input: Pick<AdoptionInput, 'jobItems'>,
): ReadonlyMap<string, JobItem> {
  let all = new Map(whole);
  for (;;) {
    const missing = new Set<string>();
    for (const item of all.values()) {
      const source = item.source?.itemKey;
      if (source !== undefined && !all.has(source) && groups.has(source)) missing.add(source);
    }
    if (missing.size === 0) return all;
    all = new Map([...all, ...input.jobItems(missing)]);
  }
}

/** The verified items as the journal records them; a `from:` item only with its source. */
function adoptedItems(
  job: LoadedJob,
  candidates: ReadonlyMap<string, unknown>,
  whole: ReadonlyMap<string, JobItem>,
  verified: ReadonlyMap<string, Verified>,
  runId: string,
  identity: (item: JobItem) => string,
): AdoptedItem[] {
  const adoptable = (item: JobItem, seen: Set<string>): boolean => {
    if (!verified.has(item.key) || seen.has(item.key)) return false;
    if (!item.source) return true;
    const source = whole.get(item.source.itemKey);
    return source !== undefined && adoptable(source, new Set([...seen, item.key]));
  };
  const adopted: AdoptedItem[] = [];
  for (const item of whole.values()) {
    if (!candidates.has(item.key) || !adoptable(item, new Set())) continue;
    const outputs = verified.get(item.key)!;
    // A `from:` item was made from its source's output: the desired-state
    // check reads that generation id from the winning attempt's request.
    const sourceId = item.source
      ? verified.get(item.source.itemKey)?.get(item.source.outputIndex + 1)?.generationId
      : undefined;
    // The influencer it was made with: the rebuilt manifest names it again.
    const influencerId = outputs.values().next().value?.influencerId;
    adopted.push({
      item: toNewItem(item, identity(item)),
      attempt: {
        idempotencyKey: idempotencyKey({
          jobName: job.name,
          runId,
          stepId: item.stepId,
          itemKey: item.key,
          attempt: 1,
        }),
        request: {
          ...item.request,
          ...(sourceId ? { generationId: sourceId } : {}),
          ...(influencerId ? { influencerId } : {}),
        },
      },
      outputs: [...outputs.values()].map((row) => ({
        output: {
          n: row.n ?? 1,
          generationId: row.generationId,
          url: row.url,
          kind: row.kind,
          modelId: row.modelId,
        },
        file: {
          file: row.file,
          sha256: row.sha256,
          bytes: row.bytes ?? 0,
          contentType: row.contentType ?? null,
        },
      })),
    });
  }
  return adopted;
}

/**
 * Records an adoption in the journal (see the module comment): the
 * influencers first, then the items as one finished run. A crash between the
 * two leaves the items to the next run's adoption, which finds the
 * influencers known.
 */
export function recordAdoption(
  journal: Journal,
  job: LoadedJob,
  adoption: Adoption,
  snapshot: Record<string, unknown>,
  logger: Logger,
): void {
  const { items, runId } = adoption;
  if (adoption.listed > items.length) {
    logger.info(
      { listed: adoption.listed, adopted: items.length },
      `${adoption.listed - items.length} item(s) in ${MANIFEST_JSONL} were not adopted (failed, or a file is missing or changed): they are made again`,
    );
  }
  for (const influencer of adoption.influencers) {
    journal.saveInfluencer({
      ...influencer,
      runId: items.length > 0 ? runId : null,
      status: 'succeeded',
    });
    logger.info(
      { influencer: influencer.localId, influencerId: influencer.influencerId },
      `adopted influencer ${influencer.localId} (${influencer.influencerId}) from ${MANIFEST_JSONL}: reused, not trained again`,
    );
  }
  if (items.length === 0) return;
  // Out of the unfinished run first: a crash before the adopted run is
  // recorded leaves them to the next run's adoption, never to a create.
  for (const { runId: from, itemKey } of adoption.release)
    journal.removeUnattemptedItem(from, itemKey);
  const message = `adopted ${items.length} item(s) from ${MANIFEST_JSONL} (the journal does not show them done)`;
  journal.adoptRun({
    run: {
      runId,
      jobName: job.name,
      jobPath: job.file,
      jobHash: job.textHash,
      budget: job.budget ?? null,
      options: { ...snapshot, adoptedFrom: MANIFEST_JSONL },
      tags: job.tags,
    },
    items,
    event: { type: 'run.adopted', message, data: { items: items.length } },
  });
  logger.info({ runId, adopted: items.length }, message);
}

/**
 * `run`'s adoption: decides and records it (see the module comment).
 * Returns how many items were adopted.
 */
export async function adoptLostJournal(
  journal: Journal,
  job: LoadedJob,
  items: readonly { readonly key: string }[],
  input: AdoptionInput & { readonly snapshot: Record<string, unknown> },
): Promise<number> {
  const keys = () => new Set(items.map((item) => item.key));
  const adoption = await readAdoption(journal, job, keys, input);
  if (!adoption) return 0;
  recordAdoption(journal, job, adoption, input.snapshot, input.logger);
  return adoption.items.length;
}
