/**
 * `ibatch journal copy FROM TO` as a user runs it: a run with a SQLite
 * journal is SIGKILLed mid-way (an unfinished run with items in flight), its
 * journal is copied into PostgreSQL and from there into a new SQLite file;
 * `status --json` and `costs --json` read the same on all three, a second
 * copy into the same target is refused naming the job, and resuming from
 * the PostgreSQL copy sends the same idempotency keys: the
 * emulator's ledger shows one charge per item. Spawned processes need
 * `npm run build`.
 */
import { renameSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { runCliCaptured, spawnCli, tempDir, testEmulator, until } from '../helpers/index.js';
import { describePostgres, postgresForFile } from '../helpers/postgres.js';
import {
  charges,
  expectOneChargePerItem,
  heldEnv,
  imageJob,
  slowEnv,
  workspace,
} from '../scheduler/helpers.js';

const SCALE = 30;
const server = postgresForFile();

describePostgres(`journal copy`, () => {
  it('SQLite → PostgreSQL → SQLite: same status and costs; a resume from the copy pays nothing twice', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const N = 12;
    const job = imageJob({ name: 'moved-job', n: N });
    const a = workspace(job);
    const env = slowEnv(em, SCALE);
    const runA = spawnCli(['run', a.jobPath], { env: heldEnv(em, SCALE), cwd: a.dir });
    await until(async () => (await charges(em)).length >= 2, {
      timeoutMs: 20_000,
      what: 'the first charges',
    });
    runA.child.kill('SIGKILL');
    await runA.exited;
    const charged = (await charges(em)).length;
    expect(charged).toBeLessThan(N);

    const url = await server.newSchema();
    const back = path.join(tempDir('back'), 'journal.db');
    const cli = (args: string[]) => runCliCaptured(args, env, a.dir);
    const there = await cli(['journal', 'copy', a.journalPath, url]);
    expect(there.code, there.stderr).toBe(0);
    const andBack = await cli(['journal', 'copy', url, back]);
    expect(andBack.code, andBack.stderr).toBe(0);
    expect(there.stdout + there.stderr + andBack.stdout).not.toContain(server.password);

    // What each document says of where its journal is differs by design
    // (`journal`, and `resume` naming it): everything else is the same.
    const read = async (command: string, journal: string) => {
      const result = await cli([command, '--json', '--journal', journal]);
      expect(result.code, result.stderr).toBe(0);
      const {
        journal: _where,
        resume: _resume,
        ...doc
      } = JSON.parse(result.stdout) as Record<string, unknown>;
      return doc;
    };
    for (const command of ['status', 'costs']) {
      const original = await read(command, a.journalPath);
      expect(await read(command, url), command).toEqual(original);
      expect(await read(command, back), command).toEqual(original);
    }
    const copied = (await read('status', url)) as { run: { finished: boolean; runId: string } };
    expect(copied.run.finished).toBe(false);

    // The target already holds the job: refused, naming it, nothing written.
    const again = await cli(['journal', 'copy', a.journalPath, url]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('moved-job');
    expect(await read('costs', url)).toEqual(await read('costs', a.journalPath));

    // The interrupted run resumes from the PostgreSQL copy once the file it
    // moved from is put away: the output folder names the journal that owns
    // its run, and refuses another while that one is still there.
    renameSync(path.dirname(a.journalPath), `${path.dirname(a.journalPath)}-moved`);
    const resume = await runCliCaptured(['run', a.jobPath, '--journal', url], env, a.dir);
    expect(resume.code, resume.stderr).toBe(0);
    expectOneChargePerItem(await charges(em), N);
    const resumed = (await read('status', url)) as { run: { finished: boolean; runId: string } };
    expect(resumed.run).toEqual(
      expect.objectContaining({ finished: true, runId: copied.run.runId }),
    );
  }, 120_000);
});
