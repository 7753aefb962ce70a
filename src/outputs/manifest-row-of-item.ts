/**
 * What one manifest row says about an item and its output, built from the
 * journal: the item's columns (its values, prompt, source file, influencer),
 * the row of a downloaded file, the row of an output with no file. The
 * folder's rows, page by page, are manifest-rows.ts.
 */
import {
  ATTEMPT_STATE,
  type AttemptRecord,
  ITEM_STATE,
  type ItemRecord,
  type Journal,
  OUTPUT_STATE,
  type OutputRecord,
} from '../journal/index.js';
import type { ManifestRow } from './manifest-row.js';
/**
 * What a row reads of an attempt: a whole record, or what a rebuild reads
 * of it (`listAttemptOutcomesOfItemsSoon`, its request filled in).
 */
export type RowAttempt = Pick<
  AttemptRecord,
  'attemptNo' | 'state' | 'generationIds' | 'chargedCost' | 'refundedCredits' | 'request'
>;

/** The attempt whose generation made an item's outputs. */
export function succeededAttempt<A extends RowAttempt>(attempts: readonly A[]): A | undefined {
  return attempts.find((a) => a.state === ATTEMPT_STATE.succeeded);
}

/**
 * What a downloaded output's row and its sidecar read of the journal: read
 * once for both (each read is a round trip on a PostgreSQL journal).
 */
export interface OutputFacts {
  readonly item: ItemRecord;
  readonly output: OutputRecord;
  readonly attempts: readonly AttemptRecord[];
  /** The run's job; unknown for a run the journal lost. */
  readonly job: string | undefined;
}

/**
 * The journal's facts of one output, or undefined when it has no such output
 * or item; what the caller read already (`known`) is not read again.
 */
export function readOutputFacts(
  journal: Journal,
  output: Pick<OutputRecord, 'runId' | 'itemKey' | 'n'>,
  known: Partial<OutputFacts> = {},
): OutputFacts | undefined {
  const item = known.item ?? journal.getItem(output.runId, output.itemKey);
  const record = known.output ?? journal.getOutput(output.runId, output.itemKey, output.n);
  if (!item || !record) return undefined;
  return {
    item,
    output: record,
    attempts: known.attempts ?? journal.listAttempts(output.runId, output.itemKey),
    job: 'job' in known ? known.job : journal.getRun(output.runId)?.jobName,
  };
}

/**
 * The row of one output just downloaded (what the download stage appends
 * while the run goes on): the row the end-of-run rebuild will write, marked
 * `current` (the rows it supersedes are marked at that rebuild).
 */
export function downloadedOutputRow(journal: Journal, facts: OutputFacts): ManifestRow | undefined {
  const { item, job } = facts;
  const winning = succeededAttempt(facts.attempts);
  // The job's influencers are read only for a row that was made with one.
  const influencers =
    job && influencerIdOf(winning) ? jobInfluencers(journal, job) : NO_INFLUENCERS;
  const common = {
    ...itemColumns({ journal, influencers, job }, item, winning),
    attempt: winning?.attemptNo,
  };
  const row = fileRow(common, generationCharge(winning), facts.output);
  return row ? { ...row, current: true } : undefined;
}

type ItemColumns = ReturnType<typeof itemColumns>;

/** The row of an output with no file: a copy the service failed, or a download that failed. */
export function failedOutputRow(
  common: ItemColumns & { attempt: number | undefined },
  creditsCost: number | null,
  output: OutputRecord,
  refunded: boolean,
  error: string,
): ManifestRow {
  return {
    ...common,
    n: output.n,
    generationId: output.generationId,
    status: ITEM_STATE.failed,
    creditsCost,
    refunded,
    url: output.url,
    error,
    at: isoOf(output.updatedAt),
  };
}

/** The row of a downloaded output file, or undefined when it is not downloaded. */
export function fileRow(
  common: ItemColumns & { attempt: number | undefined },
  creditsCost: number | null,
  output: OutputRecord,
): ManifestRow | undefined {
  if (output.state !== OUTPUT_STATE.downloaded || !output.file || !output.sha256) return undefined;
  return {
    ...common,
    n: output.n,
    generationId: output.generationId,
    status: ITEM_STATE.succeeded,
    creditsCost,
    refunded: false,
    url: output.url,
    file: output.file,
    sha256: output.sha256,
    ...(output.bytes !== null ? { bytes: output.bytes } : {}),
    ...(output.contentType ? { contentType: output.contentType } : {}),
    at: isoOf(output.updatedAt),
  };
}

/** What a row is built from: the journal, and the job's trained influencers by influencerId. */
export interface RowSource {
  readonly journal: Journal;
  readonly influencers: JobInfluencers;
  /** The job whose rows these are (the `job` column); unknown for a run the journal lost. */
  readonly job: string | undefined;
}

/** A job's job-local influencers by the service's influencerId (what the manifest names them by). */
export type JobInfluencers = ReadonlyMap<
  string,
  { readonly localId: string; readonly configHash: string }
>;
const NO_INFLUENCERS: JobInfluencers = new Map();

export function jobInfluencers(journal: Journal, jobName: string): JobInfluencers {
  const byId = new Map<string, { localId: string; configHash: string }>();
  for (const record of journal.listJobInfluencers(jobName))
    if (record.influencerId && record.status === 'succeeded')
      byId.set(record.influencerId, { localId: record.localId, configHash: record.configHash });
  return byId;
}

/**
 * The job-local influencer an attempt was sent with (its request's
 * influencerId, when the job trained it): what adoption needs to reuse it.
 */
function influencerColumns(influencers: JobInfluencers, attempt: RowAttempt | undefined) {
  const id = influencerIdOf(attempt);
  const local = id === undefined ? undefined : influencers.get(id);
  if (id === undefined || !local) return {};
  return { influencer: local.localId, influencerId: id, influencerConfig: local.configHash };
}

/** The influencerId an attempt's request carried, if any. */
function influencerIdOf(attempt: RowAttempt | undefined): string | undefined {
  const id = (attempt?.request as { influencerId?: unknown } | null)?.influencerId;
  return typeof id === 'string' ? id : undefined;
}

/** What every row of an item says: where it belongs, its values, its prompt, its source file. */
export function itemColumns(
  { journal, influencers, job }: RowSource,
  item: ItemRecord,
  attempt: RowAttempt | undefined,
) {
  const prompt = promptOf(item);
  const vars = varsOf(item);
  const sourceFile = item.sourceItemKey ? sourceFileOf(journal, item.runId, attempt) : undefined;
  // Set one by one, not spread: a rebuild makes this for each of 100,000 rows.
  const columns: ItemColumnValues = {
    runId: item.runId,
    step: item.stepId,
    item: item.itemKey,
    kind: item.kind === 'video' ? 'video' : 'image',
    modelId: item.modelId ?? '',
    label: item.label,
  };
  if (job) columns.job = job;
  if (vars) columns.vars = vars;
  if (prompt) columns.prompt = prompt;
  if (sourceFile) columns.sourceFile = sourceFile;
  const influencer = influencerColumns(influencers, attempt);
  if (influencer.influencer !== undefined) Object.assign(columns, influencer);
  return columns;
}

/** What every row of an item says (`itemColumns`). */
interface ItemColumnValues {
  job?: string;
  runId: string;
  step: string;
  item: string;
  kind: 'video' | 'image';
  modelId: string;
  label: string;
  vars?: Record<string, VarValue>;
  prompt?: string;
  sourceFile?: string;
  influencer?: string;
  influencerId?: string;
  influencerConfig?: string;
}

/**
 * The charge of one generation of an attempt: a request for N copies makes N
 * generations charged together, each its share (what the service reports per
 * id); totals count each generation once.
 */
export function generationCharge(attempt: RowAttempt | undefined): number | null {
  if (!attempt) return null;
  return attempt.chargedCost / Math.max(1, attempt.generationIds.length);
}

/** The file of the output a `from:` attempt was made from (its request's `generationId`). */
function sourceFileOf(
  journal: Journal,
  runId: string,
  attempt: RowAttempt | undefined,
): string | undefined {
  const id = (attempt?.request as { generationId?: unknown } | null)?.generationId;
  if (typeof id !== 'string') return undefined;
  return journal.findDownloadedOutput(id, runId)?.file ?? undefined;
}

type VarValue = string | number | boolean | null;

/** The item's template values as the manifest stores them (null for items of older journals). */
function varsOf(item: ItemRecord): Record<string, VarValue> | undefined {
  if (!item.vars) return undefined;
  const vars: Record<string, VarValue> = {};
  for (const [name, value] of Object.entries(item.vars)) {
    const plain =
      value === null || ['string', 'number', 'boolean'].includes(typeof value)
        ? (value as VarValue)
        : JSON.stringify(value);
    vars[name] = plain;
  }
  return vars;
}

export const isoOf = (ms: number): string => new Date(ms).toISOString();

function promptOf(item: ItemRecord): string | undefined {
  const request = item.request as { input?: { prompt?: unknown } } | null;
  const prompt = request?.input?.prompt;
  return typeof prompt === 'string' ? prompt : undefined;
}
