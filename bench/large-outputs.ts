/**
 * A job of 10,000 or 100,000 image outputs for the large-job page tests and
 * the page benchmark (test/review/large-fixture.ts wraps it in a temp dir),
 * built without the service: one run written with the real journal ops
 * (items, a succeeded attempt each, outputs marked downloaded) and one tiny
 * valid PNG per output on disk, as a finished `run` leaves them. The PNGs
 * are hard links of a few files (100,000 writes of the same bytes would
 * only measure the disk).
 */
import { createHash } from 'node:crypto';
import { linkSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pngFor } from '../src/emulator/index.js';
import { idempotencyKey, type NewItem, openJournal } from '../src/journal/index.js';

export const LARGE_JOB = 'large-review';
const SCENES = ['beach', 'rooftop', 'park', 'harbour', 'market', 'forest', 'desert', 'studio'];

export interface LargeFixture {
  readonly journalPath: string;
  readonly out: string;
  readonly runId: string;
}

/** `count` outputs of one run in `dir`, step `shots`, scene values cycling through SCENES. */
export async function buildLargeOutputs(dir: string, count: number): Promise<LargeFixture> {
  const out = path.join(dir, 'out');
  mkdirSync(path.join(out, 'shots'), { recursive: true });
  const journalPath = path.join(dir, '.ibatch', 'journal.db');
  const runId = 'run-large';
  const png = pngFor('large', 16);
  // A file takes at most 65,000 links on ext4: a fresh original every 50,000.
  const original = (i: number): string => {
    const file = path.join(dir, `original-${Math.floor(i / 50_000)}.png`);
    if (i % 50_000 === 0) writeFileSync(file, png);
    return file;
  };
  const sha256 = createHash('sha256').update(png).digest('hex');
  const items = Array.from({ length: count }, (_, i) => {
    const scene = SCENES[i % SCENES.length] ?? 'beach';
    const prompt = `a model on a ${scene}, take ${i + 1}`;
    return {
      itemKey: `shots-${String(i + 1).padStart(6, '0')}`,
      stepId: 'shots',
      kind: 'image',
      modelId: 'sdxl-lite',
      request: { modelId: 'sdxl-lite', input: { prompt } },
      requestHash: `h${i}`,
      expectedOutputs: 1,
      vars: { scene, take: String(i + 1) },
    };
  });
  await writeFinishedRun(journalPath, {
    jobName: LARGE_JOB,
    runId,
    jobPath: path.join(dir, 'job.yaml'),
    options: { outputDir: out },
    items,
    file: (i, itemKey) => {
      const file = `shots/${itemKey}-1.png`;
      linkSync(original(i), path.join(out, file));
      return { file, sha256, bytes: png.length, contentType: 'image/png' };
    },
  });
  return { journalPath, out, runId };
}

/** One completed run of a job, as a finished `run` leaves its journal. */
export interface FinishedRun {
  readonly jobName: string;
  readonly runId: string;
  readonly jobPath: string;
  /** The run's options snapshot (`service` scopes its items to that service). */
  readonly options: Record<string, unknown>;
  /** Its items: each succeeded with one output (2 credits). */
  readonly items: readonly NewItem[];
  /** Puts item `i`'s output file on disk (marked downloaded); none when absent. */
  readonly file?: (
    i: number,
    itemKey: string,
  ) => { file: string; sha256: string; bytes: number; contentType: string };
}

/**
 * Writes `run` with the real journal ops (its items, a succeeded attempt each,
 * their outputs), in one transaction: 100,000 items take seconds, not the
 * hours a service would.
 */
export async function writeFinishedRun(journalPath: string, run: FinishedRun): Promise<void> {
  const { jobName, runId } = run;
  const journal = await openJournal(journalPath, { job: jobName });
  try {
    journal.transaction(() => {
      journal.createRun({
        runId,
        jobName,
        jobPath: run.jobPath,
        jobHash: 'large',
        budget: null,
        options: run.options,
      });
      journal.addItems(
        runId,
        run.items.map((item) => ({ ...item, quotedCost: 2 })),
      );
      for (const [i, item] of run.items.entries()) {
        const { itemKey, stepId } = item;
        const generationId = `gen-${i + 1}`;
        const key = idempotencyKey({ jobName, runId, stepId, itemKey, attempt: 1 });
        journal.recordAttemptIntent({
          runId,
          itemKey,
          attemptNo: 1,
          idempotencyKey: key,
          request: item.request,
          requestHash: item.requestHash,
          quotedCost: 2,
        });
        journal.recordAttemptSubmitted({
          runId,
          itemKey,
          attemptNo: 1,
          chargedCost: 2,
          generationIds: [generationId],
        });
        journal.recordAttemptOutcome({
          runId,
          itemKey,
          attemptNo: 1,
          state: 'succeeded',
          itemState: 'succeeded',
          outputs: [
            {
              n: 1,
              generationId,
              url: `http://x/${generationId}.png`,
              kind: 'image',
              modelId: item.modelId ?? 'unknown',
            },
          ],
        });
        const file = run.file?.(i, itemKey);
        if (file) journal.markOutputDownloaded(runId, itemKey, 1, file);
      }
      journal.setRunStatus(runId, 'completed');
    });
  } finally {
    journal.close();
  }
}
