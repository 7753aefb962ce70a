/**
 * Any machine resumes any run, at every crash point: machine A (its own
 * working folder, `HOSTNAME=machine-a`) runs a campaign that trains an
 * influencer and generates from it, with one PostgreSQL journal, and
 * SIGKILLs itself at a crash point (`IBATCH_CRASH_AT`); machine B (another
 * folder holding only the same job file and reference images,
 * `HOSTNAME=machine-b`) runs the same job against the same journal. The
 * emulator's ledger is the judge: every item and the training charged once.
 * B's folder holds every output with the sha256 its manifest names.
 * Spawned processes need `npm run build`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { CRASH_POINTS } from '../../src/scheduler/crash-points.js';
import { writeCampaign } from '../chaos/campaign.js';
import { expectManifestFilesIn, spawnCli, tempDir, testEmulator } from '../helpers/index.js';
import { describePostgres, postgresForFile } from '../helpers/postgres.js';
import { charges, chargesPerItem, envFor, readRuns } from './helpers.js';

const SCALE = 30;
const server = postgresForFile();

describePostgres('two machines, one PostgreSQL journal, a kill at every crash point', () => {
  it.each(CRASH_POINTS.map((point) => [point]))(
    'A killed at %s: B resumes in its own folder, each item charged once, every output there',
    async (point) => {
      const em = await testEmulator({ timeScale: SCALE });
      const url = await server.newSchema();
      // One influencer per case (at most 30 characters).
      const username = `ava_${CRASH_POINTS.indexOf(point)}_${process.pid}`;
      const shape = { generations: 10, training: true, username };
      const a = await writeCampaign(tempDir('machine-a'), shape);
      const b = await writeCampaign(tempDir('machine-b'), shape);
      expect(readFileSync(b.jobPath, 'utf8')).toBe(readFileSync(a.jobPath, 'utf8'));
      const env = envFor(em, SCALE);
      const nth = point.startsWith('training') ? 1 : 2;

      const runA = spawnCli(['run', a.jobPath, '--journal', url], {
        env: { ...env, HOSTNAME: 'machine-a', IBATCH_CRASH_AT: `${point}:${nth}` },
        cwd: path.dirname(a.jobPath),
      });
      const killed = await runA.exited;
      expect(killed.signal, runA.stderr()).toBe('SIGKILL');

      const runB = spawnCli(['run', b.jobPath, '--journal', url], {
        env: { ...env, HOSTNAME: 'machine-b' },
        cwd: path.dirname(b.jobPath),
      });
      expect((await runB.exited).code, runB.stderr()).toBe(0);
      // B resumed A's run, on B: one run, finished, recorded with B's folder.
      const runs = await readRuns(url);
      expect(runs.map((r) => r.status)).toEqual(['completed']);
      expect(runs[0]?.options).toMatchObject({ host: 'machine-b', outputDir: b.outDir });

      const perItem = chargesPerItem(await charges(em));
      expect(perItem.size).toBe(a.generationItems + a.trainings);
      expect([...perItem.entries()].filter(([, n]) => n !== 1)).toEqual([]);
      expect(expectManifestFilesIn(b.outDir)).toHaveLength(a.expectedOutputs);
    },
    90_000,
  );
});
