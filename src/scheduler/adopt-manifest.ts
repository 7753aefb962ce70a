/**
 * A lost journal: the journal is missing, or empty
 * after its WAL was deleted, or holds no run of this job on this service base
 * URL, but the output folder and its `manifest.jsonl` remain (a CI runner
 * whose cache expired). The items the manifest lists as succeeded, with every
 * file still there and unchanged, are recorded as one finished run
 * (`adopted-…`), so the desired-state comparison sees them done and nothing
 * already paid for is paid again. Everything else is made by the run as usual.
 *
 * A job-local influencer the manifest's rows were made with (`influencer`,
 * `influencerId`, `influencerConfig`) is adopted too, when its configuration
 * is still the job file's and the account still lists it ready: an item still
 * to be made with it reuses it instead of paying for a training again.
 *
 * One decision for both commands: `readAdoption` decides, reading only;
 * `run` records it (`recordAdoption`), `plan` quotes the next run as if it
 * were recorded (adopted-reader.ts). So `plan` after a lost journal quotes
 * what `run` then charges.
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
import {
  isAlreadyDownloaded,
  isRowOfJob,
  isSingleLinkedFile,
  MANIFEST_JSONL,
  type ManifestRow,
  readManifest,
  resolveInside,
} from '../outputs/index.js';
import type { Logger } from '../shared/index.js';
import {
  type AdoptedInfluencer,
  adoptedInfluencers,
  type InfluencerAdoptionInput,
} from './adopt-influencers.js';
import { TRAINING_STEP } from './decide/item-identity.js';
import { toNewItem } from './decide/item-records.js';
import { assertRunId } from './run-id.js';

/** What a lost journal's adoption records (see the module comment). */
export interface Adoption {
  readonly jobName: string;
  readonly service: string;
  /** The adopted run's id (`adopted-…`); recorded only when `items` has any. */
  readonly runId: string;
  readonly items: readonly AdoptedItem[];
  readonly influencers: readonly AdoptedInfluencer[];
  /** The job's items the manifest lists, adopted or not. */
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
export type AdoptionJournal = Pick<Journal, 'hasJobItems' | 'findInfluencer'>;

/** One item's verified outputs, by output number. */
type Verified = Map<number, ManifestRow & { file: string; sha256: string }>;

/**
 * What a lost journal adopts from `<outputDir>/manifest.jsonl` (see the
 * module comment), reading only; undefined when the journal knows the job on
 * this service (`journal` undefined: there is no journal yet) or nothing in
 * the manifest can be adopted. `jobKeys`: the job file's item keys, asked for
 * only when the journal has no record of the job.
 */
export async function readAdoption(
  journal: AdoptionJournal | undefined,
  job: LoadedJob,
  jobKeys: () => ReadonlySet<string>,
  input: AdoptionInput,
): Promise<Adoption | undefined> {
  if (journal?.hasJobItems(job.name, input.service, TRAINING_STEP)) return undefined;
  if (!existsSync(path.join(input.outputDir, MANIFEST_JSONL))) return undefined;
  const keys = jobKeys();
  // Only this job's rows: jobs sharing the folder may have items of the same
  // key (a row naming no job, of an older manifest, is taken as the job's).
  const rows = readManifest(
    input.outputDir,
    (row) => isRowOfJob(row, job.name) && (keys.has(row.item) || row.influencerId !== undefined),
    (line) =>
      input.logger.warn({ line }, `${MANIFEST_JSONL} line ${line} is not a manifest row: skipped`),
  );
  if (rows.length === 0) return undefined;
  const groups = latestGroups(rows.filter((row) => keys.has(row.item)));
  const whole = groups.size > 0 ? input.jobItems(new Set(groups.keys())) : new Map();
  const verified = new Map<string, Verified>();
  for (const [key, item] of whole) {
    const group = groups.get(key);
    const outputs = group && (await verify(item, group, input.outputDir));
    if (outputs) verified.set(key, outputs);
  }
  const runId = `adopted-${newRunId()}`;
  assertRunId(runId);
  const items = adoptedItems(job, whole, verified, runId, input.identity);
  const influencers = await adoptedInfluencers(journal, job, rows, input);
  if (items.length === 0 && influencers.length === 0) return undefined;
  return {
    jobName: job.name,
    service: input.service,
    runId,
    items,
    influencers,
    listed: groups.size,
  };
}

/** The verified items as the journal records them; a `from:` item only with its source. */
function adoptedItems(
  job: LoadedJob,
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
    if (!adoptable(item, new Set())) continue;
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
  const message = `adopted ${items.length} item(s) from ${MANIFEST_JSONL} (journal had no record of them)`;
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
  items: readonly JobItem[],
  input: AdoptionInput & { readonly snapshot: Record<string, unknown> },
): Promise<number> {
  const keys = () => new Set(items.map((item) => item.key));
  const adoption = await readAdoption(journal, job, keys, input);
  if (!adoption) return 0;
  recordAdoption(journal, job, adoption, input.snapshot, input.logger);
  return adoption.items.length;
}

/**
 * Each item's rows from the run that recorded it last (file order): what the
 * journal's latest record of it would have been. Older runs' rows of the same
 * item are left out, so a later failure is not hidden by an earlier success.
 */
function latestGroups(rows: readonly ManifestRow[]): Map<string, ManifestRow[]> {
  const latestRun = new Map<string, string>();
  for (const row of rows) latestRun.set(row.item, row.runId ?? '');
  const groups = new Map<string, ManifestRow[]>();
  for (const row of rows) {
    if ((row.runId ?? '') !== latestRun.get(row.item)) continue;
    groups.set(row.item, [...(groups.get(row.item) ?? []), row]);
  }
  return groups;
}

/**
 * The item's outputs when every row of its group succeeded for this step,
 * model and prompt, is exactly outputs 1..expectedOutputs, and names a file inside
 * the output folder that still has the recorded sha256 and no other name (a
 * hard link); otherwise undefined.
 */
async function verify(
  item: JobItem,
  rows: readonly ManifestRow[],
  outputDir: string,
): Promise<Verified | undefined> {
  const prompt = item.request.input.prompt;
  const outputs: Verified = new Map();
  for (const row of rows) {
    const { file, sha256 } = row;
    if (row.status !== 'succeeded' || !file || !sha256) return undefined;
    if (row.step !== item.stepId || row.modelId !== item.modelId) return undefined;
    if (row.prompt !== undefined && row.prompt !== prompt) return undefined;
    // A row named by `key:` is the same item whatever its other values: they must match too.
    if (item.keyed && row.vars !== undefined && !sameValues(row.vars, item.vars)) return undefined;
    let absolute: string;
    try {
      absolute = resolveInside(outputDir, file);
    } catch {
      return undefined;
    }
    // A file with another name elsewhere (a hard link) is not one the run
    // wrote: its bytes are another file's, whatever the row says of them.
    if (!isSingleLinkedFile(absolute)) return undefined;
    if (!(await isAlreadyDownloaded(absolute, sha256))) return undefined;
    outputs.set(row.n ?? 1, { ...row, file, sha256 });
  }
  if (outputs.size !== item.expectedOutputs) return undefined;
  for (let n = 1; n <= item.expectedOutputs; n += 1) if (!outputs.has(n)) return undefined;
  return new Map([...outputs].sort(([a], [b]) => a - b));
}

function sameValues(recorded: NonNullable<ManifestRow['vars']>, vars: JobItem['vars']): boolean {
  const names = Object.keys(vars);
  return (
    names.length === Object.keys(recorded).length &&
    names.every((name) => recorded[name] === vars[name])
  );
}
