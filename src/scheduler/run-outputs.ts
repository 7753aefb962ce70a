/**
 * The manifest and report of a run, rebuilt from the journal (the source of
 * truth): one row per downloaded output, one per item that failed for good,
 * and `report.html` with costs, trainings and the timeline. Used at the end
 * of every run (even a stopped one) and by `ibatch report`.
 */
import {
  ATTEMPT_STATE,
  type EventRecord,
  FAILED_ITEM_STATES,
  ITEM_STATE,
  type ItemRecord,
  isStateIn,
  type Journal,
  OUTPUT_STATE,
} from '../journal/index.js';
import {
  type ManifestRow,
  ManifestWriter,
  type ReportData,
  writeReport,
} from '../outputs/index.js';
import { TRAINING_STEP } from './trainings.js';

function manifestRowsFromJournal(journal: Journal, runId: string): ManifestRow[] {
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
    if (item.state === ITEM_STATE.succeeded) {
      const winning = attempts.find((a) => a.state === ATTEMPT_STATE.succeeded) ?? last;
      const ids = winning?.generationIds.length ?? 1;
      const perGeneration = (winning?.chargedCost ?? 0) / Math.max(1, ids);
      for (const output of outputs.filter((o) => o.itemKey === item.itemKey)) {
        if (output.state !== OUTPUT_STATE.downloaded || !output.file || !output.sha256) continue;
        rows.push({
          ...base,
          n: output.n,
          attempt: winning?.attemptNo,
          generationId: output.generationId,
          status: ITEM_STATE.succeeded,
          creditsCost: perGeneration,
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

/**
 * Rewrites manifest.jsonl/csv and report.html of a run into `outputDir`.
 * `status` overrides the journal's (the engine writes the outputs before it
 * commits the final status, so a kill in between leaves the run resumable).
 */
export function writeRunOutputs(
  journal: Journal,
  runId: string,
  outputDir: string,
  status?: string,
): ManifestRow[] {
  const rows = manifestRowsFromJournal(journal, runId);
  const manifest = ManifestWriter.open(outputDir);
  try {
    manifest.rewrite(rows);
  } finally {
    manifest.close();
  }
  writeReport(outputDir, reportDataFromJournal(journal, runId, rows, status));
  return rows;
}

function reportDataFromJournal(
  journal: Journal,
  runId: string,
  rows: readonly ManifestRow[],
  status?: string,
): ReportData {
  const run = journal.getRun(runId);
  if (!run) throw new Error(`run ${runId} is not in the journal ${journal.path}`);
  const items = journal.listItems(runId);
  const steps = new Map<string, { id: string; modelId: string; kind?: 'image' | 'video' }>();
  for (const item of items) {
    if (item.kind === 'training' || steps.has(item.stepId)) continue;
    steps.set(item.stepId, {
      id: item.stepId,
      modelId: item.modelId ?? '',
      kind: item.kind === 'video' ? 'video' : 'image',
    });
  }
  const trainings = items
    .filter((i) => i.stepId === TRAINING_STEP)
    .map((i) => ({
      id: i.itemKey.replace(/^train-/, ''),
      name: i.label,
      status: i.state,
      creditsCost: i.chargedCredits,
      refunded: i.refundedCredits > 0,
      ...(i.error ? { error: i.error } : {}),
      // A training attempt records the influencerId of the 202 as its task id.
      ...influencerIdOf(journal, runId, i.itemKey),
    }));
  return {
    run: {
      runId,
      jobName: run.jobName,
      startedAt: new Date(run.createdAt).toISOString(),
      ...(run.finishedAt ? { finishedAt: new Date(run.finishedAt).toISOString() } : {}),
      status: status ?? run.status,
      budget: run.budget,
    },
    steps: [...steps.values()],
    rows: [...rows],
    trainings,
    events: journal.listEvents(runId, { limit: 5000 }).map(toReportEvent),
  };
}

function toReportEvent(event: EventRecord) {
  const level = /failed|blocked|error|stopped/.test(event.type)
    ? ('error' as const)
    : /drift|retry|pause|skipped/.test(event.type)
      ? ('warn' as const)
      : ('info' as const);
  return { at: new Date(event.at).toISOString(), message: event.message, level };
}

function influencerIdOf(journal: Journal, runId: string, itemKey: string) {
  const influencerId = journal
    .listAttempts(runId, itemKey)
    .findLast((a) => a.influencerId)?.influencerId;
  return influencerId ? { influencerId } : {};
}
