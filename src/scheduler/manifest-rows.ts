/**
 * Manifest rows rebuilt from the journal (the source of truth). One run's
 * rows: one per downloaded output, one per copy the service failed, one per
 * output whose download failed (with its URL and why), one per item that
 * failed for good before it had outputs. The folder's rows: those of every run of the job
 * that wrote into the folder, oldest run first, each marked `current` or not,
 * so a re-run that regenerates an item keeps the earlier files listed.
 */
import path from 'node:path';
import {
  ATTEMPT_STATE,
  FAILED_ITEM_STATES,
  ITEM_STATE,
  type ItemRecord,
  isStateIn,
  type Journal,
  OUTPUT_STATE,
  type RunRecord,
} from '../journal/index.js';
import { type ManifestRow, markCurrentRows } from '../outputs/index.js';

/** More runs than any journal holds: `listRuns` then returns all of them. */
const EVERY_RUN = 1_000_000;

/** The output folder a run recorded when it started, if any. */
export function recordedOutputDir(run: RunRecord): string | undefined {
  const dir = (run.options as { outputDir?: unknown } | null)?.outputDir;
  return typeof dir === 'string' ? path.resolve(dir) : undefined;
}

/**
 * Runs whose recorded output folder is `outputDir`, oldest first. With
 * `jobName`: only that job's runs, and also those that recorded no folder
 * (older journals), since they wrote where the job said.
 */
export function runsInFolder(journal: Journal, outputDir: string, jobName?: string): RunRecord[] {
  const folder = path.resolve(outputDir);
  return journal
    .listRuns(jobName, EVERY_RUN)
    .reverse()
    .filter((run) => {
      const dir = recordedOutputDir(run);
      return dir === folder || (jobName !== undefined && dir === undefined);
    });
}

/**
 * The manifest of `outputDir` as `run` leaves it: every run of its job there,
 * in run order. Rows of `existing` (the manifest on disk) whose run this
 * journal does not know (a lost or another journal) are kept, first: the
 * manifest describes the folder, and those files are still in it.
 */
export function folderManifestRows(
  journal: Journal,
  run: RunRecord,
  outputDir: string,
  existing: readonly ManifestRow[] = [],
): ManifestRow[] {
  const runs = runsInFolder(journal, outputDir, run.jobName);
  if (!runs.some((r) => r.runId === run.runId)) runs.push(run);
  const foreign = existing.filter((row) => !row.runId || !journal.getRun(row.runId));
  return markCurrentRows([...foreign, ...runs.flatMap((r) => runManifestRows(journal, r.runId))]);
}

/** The rows of one run (what its report shows). */
export function runManifestRows(journal: Journal, runId: string): ManifestRow[] {
  const rows: ManifestRow[] = [];
  const outputs = journal.listOutputs(runId);
  for (const item of journal.listItems(runId)) {
    if (item.kind === 'training') continue;
    const kind = item.kind === 'video' ? 'video' : 'image';
    const attempts = journal.listAttempts(runId, item.itemKey);
    const last = attempts.at(-1);
    const prompt = promptOf(item);
    const base = {
      runId,
      step: item.stepId,
      item: item.itemKey,
      kind,
      modelId: item.modelId ?? '',
      label: item.label,
      ...(prompt ? { prompt } : {}),
    } as const;
    const own = outputs.filter((o) => o.itemKey === item.itemKey);
    const failed = isStateIn(FAILED_ITEM_STATES, item.state);
    // An item that failed for good after its generation succeeded (a download
    // that can never succeed, a protected name) was charged: its outputs are
    // listed like a succeeded item's, each with why it has no file.
    const paidFor = failed && own.some((o) => o.url !== null);
    if (item.state === ITEM_STATE.succeeded || paidFor) {
      const winning = attempts.find((a) => a.state === ATTEMPT_STATE.succeeded) ?? last;
      const ids = winning?.generationIds.length ?? 1;
      const perGeneration = (winning?.chargedCost ?? 0) / Math.max(1, ids);
      const common = { ...base, attempt: winning?.attemptNo, creditsCost: perGeneration };
      for (const output of own) {
        if (output.url !== null && output.state !== OUTPUT_STATE.downloaded) {
          // A download that failed: for good (the item failed), or so far (a
          // stopped run whose resume fetches it again). Not downloaded yet in
          // a run still going: no row.
          if (output.state !== OUTPUT_STATE.failed && !failed) continue;
          rows.push({
            ...common,
            n: output.n,
            generationId: output.generationId,
            status: ITEM_STATE.failed,
            refunded: false,
            url: output.url,
            error: output.error ?? item.error ?? 'not downloaded',
          });
          continue;
        }
        if (output.state === OUTPUT_STATE.failed && output.url === null) {
          // A copy the service failed: only failed copies are refunded within
          // a succeeded attempt, so the attempt's refund is theirs.
          rows.push({
            ...common,
            n: output.n,
            generationId: output.generationId,
            status: ITEM_STATE.failed,
            refunded: (winning?.refundedCredits ?? 0) > 0,
            url: null,
            error: output.error ?? 'generation failed',
          });
          continue;
        }
        if (output.state !== OUTPUT_STATE.downloaded || !output.file || !output.sha256) continue;
        rows.push({
          ...common,
          n: output.n,
          generationId: output.generationId,
          status: ITEM_STATE.succeeded,
          refunded: false,
          url: output.url,
          file: output.file,
          sha256: output.sha256,
          ...(output.bytes !== null ? { bytes: output.bytes } : {}),
          ...(output.contentType ? { contentType: output.contentType } : {}),
        });
      }
      continue;
    }
    if (isStateIn(FAILED_ITEM_STATES, item.state)) {
      rows.push({
        ...base,
        ...(last ? { attempt: last.attemptNo } : {}),
        generationId: last?.generationIds[0] ?? null,
        status: item.state,
        creditsCost: last ? last.chargedCost : null,
        refunded: (last?.refundedCredits ?? 0) > 0,
        url: null,
        error: item.error ?? item.state,
      });
    }
  }
  return rows;
}

function promptOf(item: ItemRecord): string | undefined {
  const request = item.request as { input?: { prompt?: unknown } } | null;
  const prompt = request?.input?.prompt;
  return typeof prompt === 'string' ? prompt : undefined;
}
