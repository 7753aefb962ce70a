/**
 * `status`'s review counts come from a lean read of the output files,
 * not from the manifest rows: they must count exactly what the
 * rows say, the current output files per step and decision in force, over
 * every shape a folder's rows take (a remade item, an item failed after its
 * download, a download of a still open item, a training, cleared and
 * item-wide decisions, a run in another folder), on both journal stores.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type ItemState,
  idempotencyKey,
  type Journal,
  REVIEW_DECISION,
  type ReviewDecision,
} from '../../src/journal/index.js';
import { currentStateOf, EVERY_ITEM } from '../../src/outputs/index.js';
import { outputRows, type ReviewCounts, reviewCounts } from '../../src/review/index.js';
import { tempDir } from '../helpers/index.js';
import { onEachStore, tempJournal } from '../journal/helpers.js';

const JOB = 'counts';

function startRun(journal: Journal, runId: string, outputDir: string) {
  journal.createRun({
    runId,
    jobName: JOB,
    jobPath: '/jobs/counts.yaml',
    jobHash: 'h',
    budget: null,
    options: { outputDir },
  });
}

/** One item made by one attempt with `copies` outputs, `downloaded` of them downloaded. */
function made(
  journal: Journal,
  runId: string,
  itemKey: string,
  options: { step?: string; kind?: string; state: ItemState; copies?: number; downloaded?: number },
) {
  const stepId = options.step ?? 'shots';
  const request = { modelId: 'm', input: { prompt: itemKey } };
  journal.addItems(runId, [
    {
      itemKey,
      stepId,
      kind: options.kind ?? 'image',
      modelId: 'm',
      request,
      requestHash: `h-${itemKey}`,
      quotedCost: 1,
      expectedOutputs: options.copies ?? 1,
    },
  ]);
  const copies = options.copies ?? 0;
  if (copies === 0) {
    journal.setItemState(runId, itemKey, { state: options.state, error: 'no' });
    return;
  }
  const attempt = { runId, itemKey, attemptNo: 1 };
  const key = idempotencyKey({ jobName: JOB, runId, stepId, itemKey, attempt: 1 });
  journal.recordAttemptIntent({
    ...attempt,
    idempotencyKey: key,
    request,
    requestHash: `h-${itemKey}`,
    quotedCost: 1,
  });
  const ids = Array.from({ length: copies }, (_, i) => `${runId}-${itemKey}-${i + 1}`);
  journal.recordAttemptSubmitted({ ...attempt, chargedCost: copies, generationIds: ids });
  journal.recordAttemptOutcome({
    ...attempt,
    state: 'succeeded',
    itemState: 'succeeded',
    outputs: ids.map((generationId, i) => ({
      n: i + 1,
      generationId,
      url: `http://x/${generationId}.png`,
      kind: 'image',
      modelId: 'm',
    })),
  });
  for (let n = 1; n <= (options.downloaded ?? copies); n++) {
    journal.markOutputDownloaded(runId, itemKey, n, {
      file: `${stepId}/${runId}-${itemKey}-${n}.png`,
      sha256: 'f'.repeat(64),
      bytes: 1,
      contentType: 'image/png',
    });
  }
  if (options.state !== 'succeeded') journal.setItemState(runId, itemKey, { state: options.state });
}

function decide(
  journal: Journal,
  runId: string,
  itemKey: string,
  n: number | null,
  decision: ReviewDecision,
) {
  journal.recordReview({ jobName: JOB, runId, itemKey, n, decision, reviewer: 'ana' });
}

/** What the counts must be: the manifest rows' current files, per step and decision. */
function fromRows(journal: Journal, outputDir: string): ReviewCounts[] {
  const counts = new Map<string, ReviewCounts>();
  for (const row of outputRows(journal, JOB, outputDir, undefined)) {
    if (!row.file) continue;
    const entry = counts.get(row.step) ?? {
      step: row.step,
      approved: 0,
      rejected: 0,
      unreviewed: 0,
      superseded: 0,
      retired: 0,
    };
    const state = currentStateOf(row);
    const column = state === 'current' ? (row.review ?? 'unreviewed') : state;
    counts.set(row.step, { ...entry, [column]: entry[column] + 1 });
  }
  return [...counts.values()];
}

/**
 * A journal whose run r1 in `out` made every shape of item: two remade
 * copies, one failed after one of its downloads, one still open, one failed
 * without outputs, a training, and one of a second step.
 */
async function firstRun(): Promise<{ journal: Journal; out: string }> {
  const journal = await tempJournal();
  const out = path.resolve(tempDir('counts'), 'out');
  startRun(journal, 'r1', out);
  made(journal, 'r1', 'a', { state: 'succeeded', copies: 2 });
  made(journal, 'r1', 'b', { state: 'succeeded', copies: 2 });
  made(journal, 'r1', 'c', { state: 'failed', copies: 2, downloaded: 1 });
  made(journal, 'r1', 'd', { state: 'submitted', copies: 1 });
  made(journal, 'r1', 'e', { state: 'failed' });
  made(journal, 'r1', 't', { kind: 'training', state: 'succeeded', copies: 1 });
  made(journal, 'r1', 'v', { step: 'clips', state: 'succeeded', copies: 1 });
  return { journal, out };
}

onEachStore(() => {
  describe('review counts', () => {
    it('count what the manifest rows say, from the output files alone', async () => {
      const { journal, out } = await firstRun();
      startRun(journal, 'r2', out);
      made(journal, 'r2', 'a', { state: 'succeeded', copies: 1 });
      made(journal, 'r2', 'b', { state: 'failed' });
      made(journal, 'r2', 'w', { step: 'clips', state: 'succeeded', copies: 2, downloaded: 1 });
      decide(journal, 'r1', 'a', 1, REVIEW_DECISION.approved);
      decide(journal, 'r2', 'a', null, REVIEW_DECISION.rejected);
      decide(journal, 'r1', 'b', 1, REVIEW_DECISION.approved);
      decide(journal, 'r1', 'b', 1, REVIEW_DECISION.cleared);
      decide(journal, 'r1', 'b', null, REVIEW_DECISION.approved);
      decide(journal, 'r1', 'b', 2, REVIEW_DECISION.rejected);
      decide(journal, 'r1', 'c', 1, REVIEW_DECISION.approved);
      decide(journal, 'r1', 'v', 1, REVIEW_DECISION.rejected);

      const expected = [
        // r2's a (rejected item-wide); r1's b 1 (item approved) and 2 (rejected), c 1 (approved).
        // r1's a (two files) is superseded by r2's.
        { step: 'shots', approved: 2, rejected: 2, unreviewed: 0, superseded: 2, retired: 0 },
        { step: 'clips', approved: 0, rejected: 1, unreviewed: 1, superseded: 0, retired: 0 },
      ];
      expect(fromRows(journal, out)).toEqual(expected);
      expect(reviewCounts(journal, JOB, out)).toEqual(expected);

      // A newer run in another folder: the folder's rows take its rows too (outputRows' rule).
      startRun(journal, 'r3', path.resolve(tempDir('counts'), 'elsewhere'));
      made(journal, 'r3', 'v', { step: 'clips', state: 'succeeded', copies: 1 });
      made(journal, 'r3', 'x', { state: 'succeeded', copies: 1 });
      expect(reviewCounts(journal, JOB, out)).toEqual(fromRows(journal, out));
      expect(reviewCounts(journal, JOB, out)).not.toEqual(expected);
      // Items the job file no longer describes count as retired, whatever run made them.
      const described = new Set(['a', 'v', 'w', 'x']);
      const retired = reviewCounts(journal, JOB, out, described);
      expect(retired.find((c) => c.step === 'shots')?.retired).toBe(3);
    });

    it('of a folder of one run whose job file describes every item: counted in SQL, the reviewed read alone, the same counts', async () => {
      const { journal, out } = await firstRun();
      made(journal, 'r1', 'w', { step: 'clips', state: 'succeeded', copies: 3 });
      made(journal, 'r1', 'z', { step: 'stills', state: 'succeeded', copies: 1 });
      decide(journal, 'r1', 'a', 1, REVIEW_DECISION.approved);
      decide(journal, 'r1', 'b', 1, REVIEW_DECISION.approved);
      decide(journal, 'r1', 'b', 1, REVIEW_DECISION.cleared);
      decide(journal, 'r1', 'b', null, REVIEW_DECISION.rejected);
      decide(journal, 'r1', 'b', 2, REVIEW_DECISION.approved);
      decide(journal, 'r1', 'c', 1, REVIEW_DECISION.approved);
      decide(journal, 'r1', 'd', 1, REVIEW_DECISION.rejected); // not downloaded: no file
      decide(journal, 'r1', 'w', null, REVIEW_DECISION.approved);
      decide(journal, 'r1', 'w', 3, REVIEW_DECISION.cleared);

      const expected = [
        { step: 'shots', approved: 3, rejected: 1, unreviewed: 1, superseded: 0, retired: 0 },
        { step: 'clips', approved: 2, rejected: 0, unreviewed: 2, superseded: 0, retired: 0 },
        { step: 'stills', approved: 0, rejected: 0, unreviewed: 1, superseded: 0, retired: 0 },
      ];
      expect(fromRows(journal, out)).toEqual(expected);
      expect(reviewCounts(journal, JOB, out, EVERY_ITEM)).toEqual(expected);
      expect(reviewCounts(journal, JOB, out)).toEqual(expected);
      // No decision at all: every file unreviewed, in the order the steps first appear.
      const fresh = await tempJournal();
      const folder = path.resolve(tempDir('counts'), 'out');
      startRun(fresh, 'r1', folder);
      made(fresh, 'r1', 'v', { step: 'clips', state: 'succeeded', copies: 2 });
      made(fresh, 'r1', 'a', { state: 'succeeded', copies: 1 });
      expect(reviewCounts(fresh, JOB, folder, EVERY_ITEM)).toEqual([
        { step: 'clips', approved: 0, rejected: 0, unreviewed: 2, superseded: 0, retired: 0 },
        { step: 'shots', approved: 0, rejected: 0, unreviewed: 1, superseded: 0, retired: 0 },
      ]);
    });
  });
});
