/**
 * The whole pipeline, end to end on the emulator over HTTP: three local
 * reference PNGs -> upload set -> training of a job-local influencer ->
 * image generations with its influencerId -> image-to-video through `from:`.
 * The first run is a real `node bin/ibatch.js` process SIGKILLed while the
 * training is in progress; the resumed run must not pay for it again.
 * Needs `npm run build` (the spawned CLI runs from dist/).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import { readManifest } from '../../src/outputs/index.js';
import { emulatorEnv, tempDir, until } from '../helpers/index.js';
import {
  charges,
  emulators,
  fetchBytes,
  makeWorkspace,
  presignCount,
  runJobCli,
  sha256,
  spawnRun,
} from './fixtures/pipeline/helpers.js';

async function influencersOf(baseUrl: string, apiKey: string) {
  const res = await fetch(`${baseUrl}/influencers`, {
    headers: { Authorization: `Bearer ${apiKey}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { characters: { id: string; ready: boolean }[] }).characters;
}

describe('uploads -> training -> generations -> image-to-video', () => {
  it('downloads the emulator bytes, lists every output, charges the training once across a SIGKILL', async () => {
    // Training takes ~6 s here (LoRA stage 240 s / 40): a wide window to kill in.
    const em = await emulators({ trainingMs: { lora: 240_000 } });
    const dir = tempDir('pipeline-e2e');
    const job = makeWorkspace(dir, 'job.yaml');
    const env = emulatorEnv(em);

    const run = spawnRun(job, env);
    const { child } = run;
    const journalPath = path.join(dir, '.ibatch', 'journal.db');
    // Kill once the journal holds the service's answer (trainingId) and the
    // training is still running: the resumed run must poll it, not create again.
    const trainingId = await until(
      async () => {
        if (child.exitCode !== null) throw new Error(`ibatch exited early:\n${run.output()}`);
        if (!existsSync(journalPath)) return undefined;
        // The child may not have created the schema yet: not ready, look again.
        const journal = await openJournal(journalPath, { readonly: true }).catch(() => undefined);
        try {
          const run = journal?.listRuns('pipeline-e2e')[0];
          return run && journal?.listAttempts(run.runId, 'train-mia')[0]?.trainingId;
        } finally {
          journal?.close();
        }
      },
      { timeoutMs: 20_000, what: 'the submitted training in the journal' },
    );
    child.kill('SIGKILL');
    await run.exited;
    expect(child.signalCode).toBe('SIGKILL');
    // Killed mid-training: charged once, nothing generated, nothing in the manifest.
    const atKill = await charges(em);
    expect(atKill.trainings.map((t) => t.trainingId)).toEqual([trainingId]);
    expect(atKill.generationIds).toEqual([]);
    expect(readManifest(path.join(dir, 'out'))).toEqual([]);

    const resumed = await runJobCli(job, env);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/5 succeeded, 0 failed/);
    expect(resumed.stderr).toContain('"event":"run.resumed"');
    expect(resumed.stderr).not.toContain('"event":"training.created"');

    const after = await charges(em);
    expect(after.trainings).toHaveLength(1);
    expect(after.trainings[0]?.trainingId).toBe(trainingId);
    expect(after.ledger.filter((e) => e.type === 'refund')).toEqual([]);
    expect(await presignCount(em)).toBe(3);

    // The photos were made with the trained influencer; the clips from the photos.
    const [influencer, ...others] = await influencersOf(em.baseUrl, em.accounts[0]!.apiKey);
    expect(others).toEqual([]);
    expect(influencer?.ready).toBe(true);
    const journal = await openJournal(path.join(dir, '.ibatch', 'journal.db'), { readonly: true });
    const manifest = readManifest(path.join(dir, 'out'));
    try {
      const [run, ...moreRuns] = journal.listRuns('pipeline-e2e');
      expect(moreRuns).toEqual([]);
      const runId = run!.runId;
      const requestOf = (itemKey: string) =>
        journal.listAttempts(runId, itemKey).at(-1)?.request as {
          influencerId?: string;
          generationId?: string;
        };
      const photos = manifest.filter((r) => r.step === 'photos');
      const clips = manifest.filter((r) => r.step === 'clips');
      expect(photos).toHaveLength(2);
      expect(clips).toHaveLength(2);
      for (const row of photos) expect(requestOf(row.item).influencerId).toBe(influencer?.id);
      expect(clips.map((r) => requestOf(r.item).generationId).sort()).toEqual(
        photos.map((r) => r.generationId).sort(),
      );
    } finally {
      journal.close();
    }

    // Every generation the account paid for is in the manifest, once.
    expect(manifest.map((r) => r.generationId).sort()).toEqual([...after.generationIds].sort());
    for (const row of manifest) {
      expect(row.status).toBe('succeeded');
      expect(row.file, `${row.step}/${row.item}`).toBeTruthy();
      const onDisk = readFileSync(path.join(dir, 'out', row.file!));
      const served = await fetchBytes(row.url!);
      // The file is the served bytes plus embedded provenance (docs/provenance.md).
      expect(row.sha256).toBe(sha256(onDisk));
      const sidecar = JSON.parse(readFileSync(path.join(dir, 'out', `${row.file!}.json`), 'utf8'));
      expect(sidecar.servedSha256).toBe(sha256(served));
      expect(row.kind === 'video' ? row.file!.endsWith('.mp4') : row.file!.endsWith('.png')).toBe(
        true,
      );
    }
    expect(existsSync(path.join(dir, 'out', 'manifest.csv'))).toBe(true);
    expect(readFileSync(path.join(dir, 'out', 'report.html'), 'utf8')).toContain('Mia Pipeline');
  }, 60_000);

  it('a failed training is reported with its refund; dependent steps are skipped with the reason', async () => {
    const em = await emulators();
    await em.admin.scriptFaults([{ endpoint: 'createTraining', fault: 'training-fail', times: 1 }]);
    const dir = tempDir('pipeline-e2e');
    const job = makeWorkspace(dir, 'job.yaml');

    const result = await runJobCli(job, emulatorEnv(em));
    expect(result.code, result.stdout + result.stderr).toBe(1);

    const { trainings, trainingRefunds, generationIds } = await charges(em);
    expect(trainings).toHaveLength(1);
    expect(trainingRefunds.map((r) => r.amount)).toEqual([trainings[0]?.amount]);
    expect(generationIds).toEqual([]);

    const rows = readManifest(path.join(dir, 'out'));
    expect(rows.map((r) => `${r.step}:${r.status}`).sort()).toEqual([
      'clips:skipped',
      'clips:skipped',
      'photos:skipped',
      'photos:skipped',
    ]);
    for (const row of rows) {
      expect(row.file ?? null).toBeNull();
      expect(row.error).toMatch(/influencer mia/);
    }
    for (const row of rows.filter((r) => r.step === 'photos')) {
      expect(row.error).toMatch(/training of influencer mia failed, 300 credits refunded/);
    }
    const report = readFileSync(path.join(dir, 'out', 'report.html'), 'utf8');
    expect(report).toMatch(/refunded/i);
    expect(report).toContain('training of influencer mia failed');
  }, 40_000);
});
