/**
 * A later run of the same job reuses what earlier runs paid for: uploaded
 * assets (by content hash, per account) and the trained job-local influencer
 * (by job, influencer id and training configuration). Checked on the
 * emulator's own books: presign count and training charges.
 *
 * What the engine does with an edited reference image (asserted below): only
 * that file is uploaded again; its new hash changes the training's
 * configuration, so the influencer is trained again (a new charge), and the
 * run's generations use the new influencer. The older influencer stays on
 * the account and in the journal, reused if the old images come back.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import { emulatorEnv, tempDir } from '../helpers/index.js';
import { makePng } from '../uploads/fixtures/media-samples.js';
import {
  charges,
  emulators,
  makeWorkspace,
  presignCount,
  runJobCli,
} from './fixtures/pipeline/helpers.js';

/** influencerId sent by each photo of each run, and each run's events. */
async function runsOf(dir: string) {
  const journal = await openJournal(path.join(dir, '.ibatch', 'journal.db'), { readonly: true });
  try {
    return journal
      .listRuns('pipeline-e2e')
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((run) => ({
        runId: run.runId,
        status: run.status,
        influencerIds: [
          ...new Set(
            journal
              .listItems(run.runId)
              .filter((i) => i.stepId === 'photos')
              .map(
                (i) =>
                  (
                    journal.listAttempts(run.runId, i.itemKey).at(-1)?.request as {
                      influencerId?: string;
                    }
                  )?.influencerId,
              ),
          ),
        ],
        events: journal.listEvents(run.runId, { limit: 500 }).map((e) => e.type),
        started: journal.listEvents(run.runId, { limit: 500 }).find((e) => e.type === 'run.started')
          ?.message,
      }));
  } finally {
    journal.close();
  }
}

describe('a second run of the same job', () => {
  it('reuses uploads and the trained influencer; an edited image is uploaded and trained anew', async () => {
    const em = await emulators({ seed: 11 });
    const dir = tempDir('reuse');
    const job = makeWorkspace(dir, 'job.yaml');
    const env = emulatorEnv(em);

    const first = await runJobCli(job, env);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(await presignCount(em)).toBe(3);
    const afterFirst = await charges(em);
    expect(afterFirst.trainings).toHaveLength(1);
    expect(afterFirst.generationIds).toHaveLength(4);

    // The first run finished and the job is unchanged: a plain `run` makes nothing.
    const unchanged = await runJobCli(job, env);
    expect(unchanged.code, unchanged.stdout + unchanged.stderr).toBe(0);
    expect(unchanged.stdout).toMatch(/nothing to do/);
    expect((await charges(em)).generationIds).toHaveLength(4);

    // `--fresh` makes every item again in a new run, reusing uploads and the influencer.
    const second = await runJobCli(job, env, ['--fresh']);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    // The reused training is no item of this run: 2 photos and 2 clips (the
    // first run, which trained it, counts it as its fifth).
    expect(first.stdout).toMatch(/^finished: 5 item\(s\) succeeded$/m);
    expect(second.stdout).toMatch(/^finished: 4 item\(s\) succeeded$/m);
    expect(second.stdout).toMatch(/^items: 4 succeeded, 0 failed/m);
    expect(await presignCount(em)).toBe(3);
    const afterSecond = await charges(em);
    expect(afterSecond.trainings).toHaveLength(1);
    expect(afterSecond.generationIds).toHaveLength(8);

    // `--new` is the old spelling of `--fresh`.
    const third = await runJobCli(job, env, ['--new']);
    expect(third.code, third.stdout + third.stderr).toBe(0);
    expect(await presignCount(em)).toBe(3);
    expect((await charges(em)).trainings).toHaveLength(1);

    // An edited reference: one new upload, one new training (a new configuration),
    // and the items that use the influencer are made again by a plain `run`.
    writeFileSync(path.join(dir, 'refs', 'ref-2.png'), makePng(40, 40, [250, 250, 20]));
    const edited = await runJobCli(job, env);
    expect(edited.code, edited.stdout + edited.stderr).toBe(0);
    expect(await presignCount(em)).toBe(4);
    const afterEdit = await charges(em);
    expect(afterEdit.trainings).toHaveLength(2);
    expect(afterEdit.generationIds).toHaveLength(16);

    const runs = await runsOf(dir);
    expect(runs.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    const [r1, r2, r3, r4] = runs;
    expect(r1?.influencerIds).toHaveLength(1);
    expect(r2?.influencerIds).toEqual(r1?.influencerIds);
    expect(r3?.influencerIds).toEqual(r1?.influencerIds);
    expect(r4?.influencerIds).toHaveLength(1);
    expect(r4?.influencerIds).not.toEqual(r1?.influencerIds);
    expect(r1?.events).toContain('training.created');
    expect(r2?.events).toContain('training.reused');
    expect(r2?.events).not.toContain('training.created');
    // The start line does not count a reused influencer as a training.
    expect(r2?.started).toMatch(/, 1 influencer\(s\) to train or reuse;/);
    expect(r2?.started).not.toMatch(/training\(s\)/);
    expect(r2?.events).not.toContain('asset.uploaded');
    expect(r4?.events.filter((e) => e === 'asset.uploaded')).toHaveLength(1);
  }, 60_000);
});
