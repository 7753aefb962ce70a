/**
 * No run without a key: `ibatch run` with a key the service refuses exits 5
 * before a run is recorded. The journal keeps its rows (no run, no item, no
 * attempt), `status --json` reads the same before and after, an unfinished
 * run stays as it was for the next good run to resume, and a journal that
 * did not exist is not created. The models are cached beside the job first
 * (an online `validate`), so the run itself is the first request that needs
 * the key. A real `ibatch run` process against the emulator over HTTP (needs
 * `npm run build`); the emulator's ledger is the judge of what was charged.
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { EXIT } from '../../src/shared/index.js';
import { runCliCaptured, spawnCli, testEmulator } from '../helpers/index.js';
import { charges, envFor, imageJob, type Workspace, workspace } from '../scheduler/helpers.js';

const SCALE = 30;
/** A key of the right shape that no account of the emulator holds. */
const WRONG_KEY = `ifk_live_${'0'.repeat(32)}`;
const TABLES = ['runs', 'items', 'attempts', 'outputs', 'events'] as const;

/** Row counts of the journal's tables, read without writing to it. */
function rowCounts(w: Workspace): Record<string, number> {
  const db = new Database(w.journalPath, { readonly: true, fileMustExist: true });
  try {
    return Object.fromEntries(
      TABLES.map((table) => [
        table,
        (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n,
      ]),
    );
  } finally {
    db.close();
  }
}

describe('a refused key on `run`', () => {
  let e: RunningEmulator;
  let env: NodeJS.ProcessEnv;

  beforeEach(async () => {
    e = await testEmulator({ timeScale: SCALE });
    env = envFor(e, SCALE);
  });

  async function cli(w: Workspace, ...args: string[]) {
    return runCliCaptured(args, env, w.dir);
  }

  /** `ibatch run` as its own process with the wrong key: exit 5, one sentence, no key echoed. */
  async function refusedRun(w: Workspace): Promise<void> {
    const run = spawnCli(['run', 'job.yaml'], {
      env: { ...env, IBATCH_API_KEY: WRONG_KEY },
      cwd: w.dir,
    });
    const exit = await run.exited;
    expect(exit.code, exit.stderr).toBe(EXIT.unauthorized);
    expect(exit.stderr).toContain('refused the API key');
    expect(exit.stderr).toContain('set IBATCH_API_KEY to a valid key');
    expect(`${exit.stdout}${exit.stderr}`).not.toContain(WRONG_KEY);
  }

  it('before any run: exit 5, no journal file, nothing charged', async () => {
    const w = workspace(imageJob({ name: 'first-run', n: 3 }));
    expect((await cli(w, 'validate', 'job.yaml')).code).toBe(0); // caches the models
    await refusedRun(w);
    expect(existsSync(w.journalPath)).toBe(false);
    expect(await charges(e)).toHaveLength(0);
    // The good key then runs the job from the start.
    const good = await cli(w, 'run', 'job.yaml');
    expect(good.code, good.stderr).toBe(0);
    expect(await charges(e)).toHaveLength(3);
  }, 60_000);

  it('after a good run: status --json and the journal rows unchanged', async () => {
    const w = workspace(imageJob({ name: 'after-good', n: 2 }));
    expect((await cli(w, 'run', 'job.yaml')).code).toBe(0);
    // One item more: a good key would start a run for it.
    w.write(imageJob({ name: 'after-good', n: 3 }));
    const status = (await cli(w, 'status', 'job.yaml', '--json')).stdout;
    const rows = rowCounts(w);

    await refusedRun(w);
    expect((await cli(w, 'status', 'job.yaml', '--json')).stdout).toBe(status);
    expect(rowCounts(w)).toEqual(rows);
    expect(await charges(e)).toHaveLength(2);
  }, 60_000);

  it('beside an unfinished run: it stays as it was, and the next good run resumes it', async () => {
    const w = workspace(imageJob({ name: 'unfinished', n: 4 }));
    // --max-spend 4 stops the run after two 2-credit items, unfinished.
    const stopped = await cli(w, 'run', 'job.yaml', '--max-spend', '4');
    expect(stopped.code, stopped.stderr).toBe(EXIT.credits);
    const status = (await cli(w, 'status', 'job.yaml', '--json')).stdout;
    const before = JSON.parse(status) as { run: { runId: string; status: string } };
    expect(before.run.status).toBe('stopped_credits');
    const rows = rowCounts(w);

    await refusedRun(w);
    expect((await cli(w, 'status', 'job.yaml', '--json')).stdout).toBe(status);
    expect(rowCounts(w)).toEqual(rows);

    const resumed = await cli(w, 'run', 'job.yaml', '--json');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((JSON.parse(resumed.stdout) as { runId: string }).runId).toBe(before.run.runId);
    expect(rowCounts(w).runs).toBe(rows.runs);
    expect(await charges(e)).toHaveLength(4);
  }, 60_000);
});
