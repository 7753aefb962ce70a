/**
 * One lock per job, keyed by the journal file itself, end
 * to end: real `ibatch run` processes on one emulator over HTTP. Every
 * spelling of one journal (a symlink, a relative `x/../` path, a hard link)
 * is one lock, so a second run of the job is refused and nothing is charged
 * twice; two different jobs in one folder share the journal and run at once.
 * Spawned processes need `npm run build`.
 */
import { linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliCaptured, spawnCli, testEmulator, until, whileStopped } from '../helpers/index.js';
import {
  charges,
  expectOneChargePerItem,
  imageJob,
  slowEnv,
  type Workspace,
  workspace,
} from './helpers.js';

const SCALE = 30;

/** Another name for `.ibatch/journal.db`, relative to the workspace. */
const SPELLINGS: readonly [string, (w: Workspace) => string, RegExp][] = [
  [
    'a symlink',
    (w) => {
      mkdirSync(path.join(w.dir, 'alt'));
      symlinkSync(w.journalPath, path.join(w.dir, 'alt', 'journal.db'));
      return 'alt/journal.db';
    },
    /The job "spelled-job" is being run by process \d+ on /,
  ],
  [
    'a relative x/../ spelling',
    (w) => {
      mkdirSync(path.join(w.dir, 'x'));
      return './x/../.ibatch/journal.db';
    },
    /The job "spelled-job" is being run by process \d+ on /,
  ],
  [
    'a hard link',
    (w) => {
      linkSync(w.journalPath, path.join(w.dir, 'hard.db'));
      return 'hard.db';
    },
    /has 2 hard links/,
  ],
];

describe('one lock per job, whatever the journal is called', () => {
  it.each(SPELLINGS)(
    'a second run of the job through %s is refused (exit 2); each item is charged once',
    async (_what, spell, refusal) => {
      const em = await testEmulator({ timeScale: SCALE });
      const N = 20;
      const ws = workspace(imageJob({ name: 'spelled-job', n: N }));
      const env = slowEnv(em, SCALE);
      // The holder names the journal by its absolute path; the other spelling is relative.
      const holder = spawnCli(['run', ws.jobPath, '--journal', ws.journalPath], {
        env,
        cwd: ws.dir,
      });
      await until(async () => (await charges(em)).length >= 1, {
        timeoutMs: 20_000,
        what: 'the holder to charge',
      });
      const other = spell(ws);
      await whileStopped(holder, async () => {
        const second = await runCliCaptured(['run', ws.jobPath, '--journal', other], env, ws.dir);
        expect(second.code, second.stderr).toBe(2);
        expect(second.stderr).toMatch(refusal);
      });
      expect((await holder.exited).code, holder.stderr()).toBe(0);
      expectOneChargePerItem(await charges(em), N);
    },
    60_000,
  );

  it('the refusal names the job, pid, host, since when (local time, seconds ago) and --wait', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(imageJob({ name: 'named-job', n: 20 }));
    const env = slowEnv(em, SCALE);
    const holder = spawnCli(['run', ws.jobPath], { env, cwd: ws.dir });
    await until(async () => (await charges(em)).length >= 1, {
      timeoutMs: 20_000,
      what: 'the holder to charge',
    });
    await whileStopped(holder, async () => {
      const second = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
      expect(second.code).toBe(2);
      expect(second.stderr).toMatch(
        new RegExp(
          `The job "named-job" is being run by process ${holder.child.pid} on \\S+ ` +
            '\\(since \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d, \\d+ s ago\\)',
        ),
      );
      expect(second.stderr).toContain('--wait');
    });
    expect((await holder.exited).code, holder.stderr()).toBe(0);
  }, 60_000);
});

describe('different jobs in one folder', () => {
  it('run at the same time on one journal: both exit 0, every item charged once', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    // A has many items and B few, and B starts once A has charged: B's run
    // then begins and ends while A's is under way, however busy the machine.
    const NA = 24;
    const NB = 3;
    const ws = workspace(imageJob({ name: 'job-a', n: NA }));
    const jobB = path.join(ws.dir, 'job-b.yaml');
    writeFileSync(jobB, imageJob({ name: 'job-b', n: NB, prompt: 'a windy pier, scene' }));
    const env = slowEnv(em, SCALE);
    const a = spawnCli(['run', ws.jobPath], { env, cwd: ws.dir });
    await until(async () => (await charges(em)).length > 0, {
      timeoutMs: 30_000,
      what: "job A's first charge",
    });
    const b = spawnCli(['run', jobB], { env, cwd: ws.dir });
    const [ea, eb] = await Promise.all([a.exited, b.exited]);
    expect(ea.code, a.stderr()).toBe(0);
    expect(eb.code, b.stderr()).toBe(0);
    expectOneChargePerItem(await charges(em), NA + NB);
    // Both ran in the one journal beside the jobs, at the same time.
    const status = await runCliCaptured(['status', '--json'], {}, ws.dir);
    type Run = { jobName: string; status: string; createdAt: string; finishedAt: string };
    const doc = JSON.parse(status.stdout) as { runs: Run[] };
    expect(doc.runs.map((r) => `${r.jobName}:${r.status}`).sort()).toEqual([
      'job-a:completed',
      'job-b:completed',
    ]);
    const runOf = (job: string) => doc.runs.find((r) => r.jobName === job) as Run;
    const [runA, runB] = [runOf('job-a'), runOf('job-b')];
    // B was neither refused nor made to wait for A: it began before A ended.
    expect(Date.parse(runB.createdAt)).toBeLessThan(Date.parse(runA.finishedAt));
  }, 60_000);
});
