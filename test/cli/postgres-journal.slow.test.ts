/**
 * `--journal postgres://...` as a user runs it: a whole `ibatch run` against
 * the emulator with its journal in PostgreSQL, read back by `status` from a
 * folder with no local state, and the same command again converging with no
 * new create; an unreachable server is exit 4 without a stack trace, and a
 * server stopped mid-run stops the run (exit 4) and the same command resumes
 * it once the server is back, paying nothing twice. The
 * password is never in what the commands print (text, JSON logs, `--json`
 * documents, errors), the notify payload, the journal's rows or the files. `plan` reads the same
 * journal: nothing new after a whole run. Spawned processes need
 * `npm run build`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import {
  expectManifestFilesIn,
  expectNoStack,
  freePort,
  runCliCaptured,
  spawnCli,
  tempDir,
  testEmulator,
  testReceiver,
  until,
} from '../helpers/index.js';
import { describePostgres, postgresForFile } from '../helpers/postgres.js';
import {
  charges,
  earlyCount,
  envFor,
  expectOneChargePerItem,
  heldEnv,
  imageJob,
  machineARunning,
  readRuns,
  sentBeforePause,
  slowEnv,
  workspace,
} from '../scheduler/helpers.js';

const SCALE = 30;
const server = postgresForFile();

describePostgres(`a PostgreSQL journal`, () => {
  it('run, status from another folder, run again: one charge per item, the password nowhere', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const N = 4;
    const receiver = await testReceiver();
    const job = `${imageJob({ name: 'team-job', n: N })}notify:\n  - ${receiver.url()}\n`;
    const ws = workspace(job);
    const url = await server.newSchema();
    const env = envFor(em, SCALE);
    const run = spawnCli(['run', ws.jobPath, '--journal', url, '--log-format', 'json'], {
      env,
      cwd: ws.dir,
    });
    const { code } = await run.exited;
    expect(code, run.stderr()).toBe(0);
    expectOneChargePerItem(await charges(em), N);
    // The logs as JSON lines, checked for the password below.
    expect(run.stderr()).toMatch(/^\{"level":/m);
    expect(receiver.received.length).toBeGreaterThanOrEqual(1);
    // Nothing of the journal beside the job: it lives in PostgreSQL.
    expect(existsSync(ws.journalPath)).toBe(false);

    // Another folder, the password from PGPASSWORD, the address from IBATCH_JOURNAL.
    const elsewhere = tempDir('elsewhere');
    const shown = new URL(url);
    shown.password = '';
    const readerEnv = { ...env, IBATCH_JOURNAL: shown.toString(), PGPASSWORD: server.password };
    // A process of its own: PGPASSWORD is read from the process's environment.
    const reader = spawnCli(['status', '--json'], { env: readerEnv, cwd: elsewhere });
    const read = await reader.exited;
    const status = { code: read.code, stdout: reader.stdout(), stderr: reader.stderr() };
    expect(status.code, status.stderr).toBe(0);
    const { runs } = JSON.parse(status.stdout) as {
      runs: { jobName: string; status: string; net: number }[];
    };
    expect(runs).toEqual([
      expect.objectContaining({ jobName: 'team-job', status: 'completed', net: 2 * N }),
    ]);

    const again = await runCliCaptured(['run', ws.jobPath, '--journal', url], env, ws.dir);
    expect(again.code, again.stderr).toBe(0);
    expectOneChargePerItem(await charges(em), N);

    // The password in the URL: every --json document names the journal without it.
    const json = await Promise.all(
      [
        ['status', ws.jobPath, '--json'],
        ['costs', '--json'],
        ['plan', ws.jobPath, '--json'],
      ].map((args) => runCliCaptured([...args, '--journal', url], env, elsewhere)),
    );
    for (const result of json) expect(result.code, result.stderr).toBe(0);
    const [jobStatus] = json;
    // Named by host, port, database and schema; its userinfo without a password.
    const schemaName = new URL(url).searchParams.get('schema');
    expect((JSON.parse(jobStatus?.stdout ?? '{}') as { journal: string }).journal).toMatch(
      new RegExp(
        `^postgres://[^:@/]*@127\\.0\\.0\\.1:${server.port}/postgres\\?schema=${schemaName}$`,
      ),
    );
    // A refused login's error quotes neither password.
    const wrong = new URL(url);
    wrong.password = `${server.password}x`;
    const refused = await runCliCaptured(['status', '--journal', wrong.toString()], {}, elsewhere);
    expect(refused.code, refused.stderr).toBe(4);
    expect(refused.stderr).toMatch(/postgres:\/\/[^:@/\s]*@127\.0\.0\.1/);
    expectNoStack(refused.stderr);

    const printed = [
      run.stdout(),
      run.stderr(),
      status.stdout,
      status.stderr,
      again.stdout,
      again.stderr,
      ...json.flatMap((r) => [r.stdout, r.stderr]),
      refused.stdout,
      refused.stderr,
      // What the notify receiver was sent: headers and body.
      ...receiver.received.map((r) => JSON.stringify(r.headers) + r.body),
    ];
    expect(printed.join('\n')).not.toContain(server.password);
    // Nor in any row of the journal, nor in the files the run wrote (manifest, report).
    const schema = new URL(url).searchParams.get('schema');
    const tables = await server.query<{ name: string }>(
      'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1',
      [schema],
    );
    expect(tables.length).toBeGreaterThan(5);
    for (const { name } of tables) {
      const rows = await server.query(`SELECT * FROM ${schema}.${name}`);
      expect(JSON.stringify(rows), name).not.toContain(server.password);
    }
    const files = readdirSync(ws.dir, { recursive: true, withFileTypes: true }).filter((f) =>
      f.isFile(),
    );
    expect(files.map((f) => f.name)).toContain('manifest.jsonl');
    for (const file of files) {
      const text = readFileSync(path.join(file.parentPath, file.name), 'utf8');
      expect(text, file.name).not.toContain(server.password);
    }
  }, 60_000);

  it('an unreachable server: exit 4, one sentence, no password', async () => {
    const url = `postgres://${server.user}:${server.password}@127.0.0.1:${await freePort()}/postgres`;
    const result = await runCliCaptured(['status', '--journal', url], {}, tempDir('nowhere'));
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toMatch(/PostgreSQL cannot be reached/);
    expectNoStack(result.stderr);
    expect(result.stdout + result.stderr).not.toContain(server.password);
  });

  it('two folders, two host names, one PostgreSQL: A is SIGKILLed mid-run, B resumes its run, one charge per item', async () => {
    const N = 12;
    const url = await server.newSchema();
    const { em, b, runA } = await machineARunning({
      url,
      name: 'two-machines',
      n: N,
      scale: SCALE,
      charged: 2,
    });
    const env = slowEnv(em, SCALE);
    runA.child.kill('SIGKILL');
    await runA.exited;
    expect((await charges(em)).length).toBeLessThan(N);

    const runB = spawnCli(['run', b.jobPath, '--journal', url], {
      env: { ...env, HOSTNAME: 'machine-b' },
      cwd: b.dir,
    });
    const { code } = await runB.exited;
    expect(code, runB.stderr()).toBe(0);
    expectOneChargePerItem(await charges(em), N);
    // B resumed A's run: one run in the journal, read from B's folder.
    const reader = spawnCli(['status', '--json', '--journal', url], { env, cwd: b.dir });
    await reader.exited;
    const { runs } = JSON.parse(reader.stdout()) as { runs: { status: string }[] };
    expect(runs).toEqual([expect.objectContaining({ status: 'completed' })]);
    // B's own output folder holds every output, A's finished ones fetched again.
    const bOut = path.join(b.dir, 'out');
    // The run names B's folder and B: a reader on A must not take B's path for its own.
    const [resumed] = await readRuns(url);
    expect(resumed?.options).toMatchObject({ outputDir: bOut, host: 'machine-b' });
    expect(expectManifestFilesIn(bOut)).toHaveLength(N);
  }, 90_000);

  it("a run SIGKILLed while paused by a 429's Retry-After on A: B resumes it and sends nothing before the pause ends", async () => {
    // The service allows 2 creates per window; our limits allow more, so the
    // third create gets a 429 whose Retry-After pauses the run, journaled.
    const scale = 10;
    const em = await testEmulator({
      timeScale: scale,
      rateLimits: { generations: { count: 2, windowMs: 60_000 } },
    });
    const N = 4;
    const job = imageJob({ name: 'paused-job', n: N });
    const a = workspace(job);
    const b = workspace(job);
    const url = await server.newSchema();
    const env = envFor(em, scale);
    const runA = spawnCli(['run', a.jobPath, '--journal', url], {
      env: { ...env, HOSTNAME: 'machine-a' },
      cwd: a.dir,
    });
    // The pause as B sees it, from its own folder: the shared journal's run.
    const pauseSeenFromB = async () => {
      const result = await runCliCaptured(
        ['status', b.jobPath, '--json', '--journal', url],
        env,
        b.dir,
      );
      if (result.code !== 0) return undefined;
      const { run } = JSON.parse(result.stdout) as {
        run: { runId: string; status: string; notBefore: string | null };
      };
      return run;
    };
    const paused = await until(
      async () => ((await pauseSeenFromB())?.notBefore ? true : undefined),
      {
        timeoutMs: 20_000,
        what: 'a persisted Retry-After pause',
      },
    );
    expect(paused).toBe(true);
    runA.child.kill('SIGKILL');
    await runA.exited;
    const killed = await pauseSeenFromB();
    const notBefore = Date.parse(killed?.notBefore ?? '');
    expect(notBefore).toBeGreaterThan(0);
    expect((await charges(em)).length).toBeLessThan(N);

    const earlyBefore = await earlyCount(em);
    const runB = await runCliCaptured(
      ['run', b.jobPath, '--journal', url],
      { ...env, HOSTNAME: 'machine-b' },
      b.dir,
    );
    expect(runB.code, runB.stderr).toBe(0);
    // B honoured A's pause: it ended after it, and the service saw no request
    // of B's before the Retry-After A recorded.
    expect(Date.now()).toBeGreaterThanOrEqual(notBefore);
    expect(await sentBeforePause(em, earlyBefore, notBefore)).toEqual([]);
    expectOneChargePerItem(await charges(em), N);
    const done = await pauseSeenFromB();
    expect(done).toMatchObject({ runId: killed?.runId, status: 'completed', notBefore: null });
  }, 60_000);

  // Last: it stops this file's server (and starts it again).
  it('PostgreSQL stopped mid-run: exit 4; the same command resumes once it is back, no double charge', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const N = 20;
    const ws = workspace(imageJob({ name: 'outage-job', n: N }));
    const url = await server.newSchema();
    const env = slowEnv(em, SCALE);
    const run = spawnCli(['run', ws.jobPath, '--journal', url], {
      env: heldEnv(em, SCALE),
      cwd: ws.dir,
    });
    await until(async () => (await charges(em)).length >= 2, {
      timeoutMs: 20_000,
      what: 'a first charge',
    });
    await server.stop();
    const { code } = await run.exited;
    expect(code, run.stderr()).toBe(4);
    expect(run.stderr()).toMatch(/PostgreSQL cannot be reached/);
    expectNoStack(run.stderr());
    expect(run.stdout() + run.stderr()).not.toContain(server.password);
    expect((await charges(em)).length).toBeLessThan(N);

    await server.restart();
    const resumed = await runCliCaptured(['run', ws.jobPath, '--journal', url], env, ws.dir);
    expect(resumed.code, resumed.stderr).toBe(0);
    expectOneChargePerItem(await charges(em), N);
  }, 90_000);

  it('plan quotes every item new before the first run and none after it', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const N = 3;
    const ws = workspace(imageJob({ name: 'planned-job', n: N }));
    const url = await server.newSchema();
    const env = envFor(em, SCALE);
    const plan = async () => {
      const result = await runCliCaptured(
        ['plan', ws.jobPath, '--json', '--journal', url],
        env,
        ws.dir,
      );
      expect(result.code, result.stderr).toBe(0);
      return (JSON.parse(result.stdout) as { steps: Record<string, unknown>[] }).steps[0];
    };
    // A schema never migrated holds no journal yet: every item is new.
    expect(await plan()).toMatchObject({ new: N, done: 0 });

    const run = await runCliCaptured(['run', ws.jobPath, '--journal', url], env, ws.dir);
    expect(run.code, run.stderr).toBe(0);
    expectOneChargePerItem(await charges(em), N);

    expect(await plan()).toMatchObject({ new: 0, done: N });
    expectOneChargePerItem(await charges(em), N);
  });
});
