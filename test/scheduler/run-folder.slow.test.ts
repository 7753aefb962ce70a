/**
 * A run that leaves the folder it recorded (run-folder.ts) brings its own
 * done files along: machine A stops a run with files downloaded (`--max-spend`,
 * exit 3, resumable), machine B resumes it in its own folder from the same
 * journal (a SQLite file both name, or PostgreSQL), and B's folder holds every
 * output its manifest lists; the same when one machine's recorded folder is
 * gone and the run continues in the job's new one. Spawned processes need
 * `npm run build`.
 */
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectManifestFilesIn, spawnCli, tempDir, testEmulator } from '../helpers/index.js';
import { describePostgres, postgresForFile } from '../helpers/postgres.js';
import {
  charges,
  envFor,
  expectOneChargePerItem,
  imageJob,
  readRuns,
  workspace,
} from './helpers.js';

const SCALE = 60;
const N = 6;
/** Three of the six 2-credit items: the first run stops with some done. */
const CAP = '6';

async function run(args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  const child = spawnCli(args, { env, cwd });
  const { code } = await child.exited;
  return { code, stderr: child.stderr() };
}

function resumedOnAnotherMachine(journalOf: () => Promise<string>) {
  it('B resumes A stopped run in its own folder: every file of the run is there, A done ones fetched again', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const journal = await journalOf();
    const job = imageJob({ name: 'moved-run', n: N });
    const a = workspace(job);
    const b = workspace(job);
    const env = envFor(em, SCALE);

    const first = await run(['run', a.jobPath, '--journal', journal, '--max-spend', CAP], a.dir, {
      ...env,
      HOSTNAME: 'machine-a',
    });
    expect(first.code, first.stderr).toBe(3);
    // The case under test: A left done files in its own folder, none in B's.
    const onA = expectManifestFilesIn(path.join(a.dir, 'out'));
    expect(onA.length).toBeGreaterThan(0);
    expect(existsSync(path.join(b.dir, 'out'))).toBe(false);

    const second = await run(['run', b.jobPath, '--journal', journal], b.dir, {
      ...env,
      HOSTNAME: 'machine-b',
    });
    expect(second.code, second.stderr).toBe(0);
    const runs = await readRuns(journal);
    expect(runs.map((r) => r.status)).toEqual(['completed']);
    expect(runs[0]?.options).toMatchObject({
      host: 'machine-b',
      outputDir: path.join(b.dir, 'out'),
    });
    expectOneChargePerItem(await charges(em), N);
    const onB = expectManifestFilesIn(path.join(b.dir, 'out'));
    expect(onB).toHaveLength(N);
    expect(onB).toEqual(expect.arrayContaining(onA));
  }, 60_000);
}

describe('a run moved to another folder', () => {
  resumedOnAnotherMachine(async () => path.join(tempDir('shared-journal'), 'journal.db'));

  it('its recorded folder gone, the run continues in the job new one with every file, its done ones fetched again', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const w = workspace(imageJob({ name: 'moved-folder', n: N }));
    const env = envFor(em, SCALE);
    const first = await run(['run', w.jobPath, '--out', 'first', '--max-spend', CAP], w.dir, env);
    expect(first.code, first.stderr).toBe(3);
    const done = expectManifestFilesIn(path.join(w.dir, 'first'));
    expect(done.length).toBeGreaterThan(0);
    rmSync(path.join(w.dir, 'first'), { recursive: true });

    const second = await run(['run', w.jobPath, '--out', 'second'], w.dir, env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/continues in .*second/);
    expectOneChargePerItem(await charges(em), N);
    const files = expectManifestFilesIn(path.join(w.dir, 'second'));
    expect(files).toHaveLength(N);
    expect(files).toEqual(expect.arrayContaining(done));
  }, 60_000);
});

const server = postgresForFile();
describePostgres('a run moved to another machine, PostgreSQL journal', () => {
  resumedOnAnotherMachine(() => server.newSchema());
});
