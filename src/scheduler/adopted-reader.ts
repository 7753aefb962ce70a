/**
 * The journal as `run` leaves it once it recorded an adoption
 * (adopt-manifest.ts), read without writing it: `plan` opens the journal
 * read-only, so it decides the next run on this view instead. It adds what
 * `recordAdoption` writes and the decision reads: the adopted run (the job's
 * newest on the service, finished), its items' latest records and outputs,
 * and the adopted influencers.
 */
import type { LoadedJob } from '../job/index.js';
import {
  type InfluencerRecord,
  ITEM_STATE,
  type ItemHistoryRow,
  OUTPUT_STATE,
  type OutputRecord,
  RUN_STATUS,
  type RunRecord,
} from '../journal/index.js';
import { MANIFEST_JSONL } from '../outputs/index.js';
import type { Adoption } from './adopt-manifest.js';
import type { JournalReader } from './decide/run-history.js';

export function adoptedReader(
  reader: JournalReader,
  job: LoadedJob,
  adoption: Adoption,
  snapshot: Record<string, unknown>,
): JournalReader {
  const now = Date.now();
  const recorded = adoption.items.length > 0;
  const run: RunRecord = {
    runId: adoption.runId,
    jobName: job.name,
    jobPath: job.file,
    jobHash: job.textHash,
    status: RUN_STATUS.completed,
    budget: job.budget ?? null,
    options: { ...snapshot, adoptedFrom: MANIFEST_JSONL },
    notBefore: null,
    createdAt: now,
    updatedAt: now,
    finishedAt: now,
    tags: job.tags,
  };
  const ours = (jobName: string | undefined) => recorded && jobName === adoption.jobName;
  return {
    latestItems: (jobName, service, held) => {
      const latest = reader.latestItems(jobName, service, held);
      if (!ours(jobName) || service !== adoption.service) return latest;
      for (const { item, attempt } of adoption.items) {
        const sourceId = (attempt.request as { generationId?: unknown }).generationId;
        latest.set(item.itemKey, {
          runId: adoption.runId,
          itemKey: item.itemKey,
          stepId: item.stepId,
          requestHash: item.requestHash,
          state: ITEM_STATE.succeeded,
          sourceGenerationId: item.sourceItemKey && typeof sourceId === 'string' ? sourceId : null,
        } satisfies ItemHistoryRow);
      }
      return latest;
    },
    listOutputs: (runId, state, itemKey) => {
      if (!recorded || runId !== adoption.runId) return reader.listOutputs(runId, state, itemKey);
      if (state !== undefined && state !== OUTPUT_STATE.downloaded) return [];
      return adoption.items
        .filter(({ item }) => itemKey === undefined || item.itemKey === itemKey)
        .flatMap(({ item, outputs }) =>
          outputs.map(
            ({ output, file }): OutputRecord => ({
              runId,
              itemKey: item.itemKey,
              n: output.n,
              generationId: output.generationId ?? null,
              url: output.url ?? null,
              kind: output.kind,
              modelId: output.modelId ?? null,
              file: file.file,
              sha256: file.sha256,
              bytes: file.bytes,
              contentType: file.contentType,
              state: OUTPUT_STATE.downloaded,
              error: null,
              createdAt: now,
              updatedAt: now,
            }),
          ),
        );
    },
    getRun: (runId) => (recorded && runId === adoption.runId ? run : reader.getRun(runId)),
    listRuns: (jobName, limit) => {
      const runs = reader.listRuns(jobName, limit);
      return ours(jobName) ? [run, ...runs] : runs;
    },
    listItems: (runId, filter) => reader.listItems(runId, filter),
    eachRunItemHash: (runId, onItem) => reader.eachRunItemHash(runId, onItem),
    progressByStep: (runId) => reader.progressByStep(runId),
    getItem: (runId, itemKey) => reader.getItem(runId, itemKey),
    getOpenAttempt: (runId, itemKey) => reader.getOpenAttempt(runId, itemKey),
    findInfluencer: (lookup) => {
      const known = reader.findInfluencer(lookup);
      if (known) return known;
      const adopted = adoption.influencers.find(
        (i) =>
          i.scope === lookup.scope &&
          i.jobName === lookup.jobName &&
          i.localId === lookup.localId &&
          i.configHash === lookup.configHash,
      );
      if (!adopted) return undefined;
      return {
        ...adopted,
        runId: recorded ? adoption.runId : null,
        trainingId: null,
        loraUrl: null,
        status: 'succeeded',
        idempotencyKey: null,
        attemptNo: 1,
        creditsCost: null,
        refunded: false,
        error: null,
        createdAt: now,
        updatedAt: now,
      } satisfies InfluencerRecord;
    },
    latestReviews: (jobName) => reader.latestReviews(jobName),
    snapshot: (read) => reader.snapshot(read),
  };
}
