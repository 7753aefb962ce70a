/**
 * Ground of the review tests: the pipeline job (two photos, two clips made
 * from them) run once on the emulator, and a review server on its journal
 * (real HTTP on loopback, a real SQLite file), stopped when the test is done.
 */
import path from 'node:path';
import { expect } from 'vitest';
import { type Journal, openJournal } from '../../src/journal/index.js';
import { newToken, startReviewServer } from '../../src/review/server/index.js';
import { defer, emulatorEnv, tempDir } from '../helpers/index.js';
import { emulators, makeWorkspace, runJobCli } from '../scheduler/fixtures/pipeline/helpers.js';

export const JOB_NAME = 'pipeline-e2e';

export interface RunDone {
  readonly dir: string;
  readonly job: string;
  readonly out: string;
  readonly journalPath: string;
  readonly env: NodeJS.ProcessEnv;
}

/** The pipeline job run to the end on a fresh emulator. */
export async function pipelineRun(name: string): Promise<RunDone> {
  const em = await emulators({ seed: 15 });
  const dir = tempDir(name);
  const job = makeWorkspace(dir, 'job.yaml');
  const env = emulatorEnv(em);
  const result = await runJobCli(job, env);
  expect(result.code, result.stdout + result.stderr).toBe(0);
  return {
    dir,
    job,
    out: path.join(dir, 'out'),
    journalPath: path.join(dir, '.ibatch', 'journal.db'),
    env,
  };
}

/** A review server on the run's journal; its base URL (no token) and token. */
export async function reviewServer(run: RunDone, reviewer = 'ana') {
  const journal: Journal = await openJournal(run.journalPath, { job: `${JOB_NAME} (review)` });
  const token = newToken();
  const server = await startReviewServer({ journal, jobName: JOB_NAME, reviewer, token });
  defer(async () => {
    await server.close();
    journal.close();
  });
  const base = `http://127.0.0.1:${server.port}`;
  return { journal, token, base, url: server.url };
}
