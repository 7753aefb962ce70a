/**
 * A job of 10,000 image outputs for the review page's large-job test, built
 * in a second or two without the service: one run written with the real
 * journal ops (items, a succeeded attempt each, outputs marked downloaded)
 * and one tiny valid PNG per output on disk, as a finished `run` leaves them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pngFor } from '../../src/emulator/index.js';
import { idempotencyKey, openJournal } from '../../src/journal/index.js';
import { tempDir } from '../helpers/index.js';

export const LARGE_JOB = 'large-review';
const SCENES = ['beach', 'rooftop', 'park', 'harbour', 'market', 'forest', 'desert', 'studio'];

export interface LargeFixture {
  readonly journalPath: string;
  readonly out: string;
}

/** `count` outputs of one run, step `shots`, scene values cycling through SCENES. */
export async function largeFixture(count: number): Promise<LargeFixture> {
  const dir = tempDir('review-large');
  const out = path.join(dir, 'out');
  mkdirSync(path.join(out, 'shots'), { recursive: true });
  const journalPath = path.join(dir, '.ibatch', 'journal.db');
  const journal = await openJournal(journalPath, { job: LARGE_JOB });
  const runId = 'run-large';
  const png = pngFor('large', 16);
  try {
    journal.transaction(() => {
      journal.createRun({
        runId,
        jobName: LARGE_JOB,
        jobPath: path.join(dir, 'job.yaml'),
        jobHash: 'large',
        budget: null,
        options: { outputDir: out },
      });
      const items = Array.from({ length: count }, (_, i) => {
        const scene = SCENES[i % SCENES.length] ?? 'beach';
        const prompt = `a model on a ${scene}, take ${i + 1}`;
        return {
          itemKey: `shots-${String(i + 1).padStart(5, '0')}`,
          stepId: 'shots',
          kind: 'image',
          modelId: 'sdxl-lite',
          request: { modelId: 'sdxl-lite', input: { prompt } },
          requestHash: `h${i}`,
          quotedCost: 2,
          expectedOutputs: 1,
          vars: { scene, take: String(i + 1) },
        };
      });
      journal.addItems(runId, items);
      for (const [i, item] of items.entries()) {
        const { itemKey } = item;
        const generationId = `gen-${i + 1}`;
        const key = idempotencyKey({
          jobName: LARGE_JOB,
          runId,
          stepId: 'shots',
          itemKey,
          attempt: 1,
        });
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
              modelId: 'sdxl-lite',
            },
          ],
        });
        const file = `shots/${itemKey}-1.png`;
        writeFileSync(path.join(out, file), png);
        journal.markOutputDownloaded(runId, itemKey, 1, {
          file,
          sha256: 'large',
          bytes: png.length,
          contentType: 'image/png',
        });
      }
      journal.setRunStatus(runId, 'completed');
    });
  } finally {
    journal.close();
  }
  return { journalPath, out };
}
