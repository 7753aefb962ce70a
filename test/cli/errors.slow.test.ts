/**
 * How the real CLI (`node bin/ibatch.js`, needs `npm run build`) ends on
 * errors: a bad flag value is a usage error (exit 2, one line naming the
 * flag, no stack); Ctrl-C while `run --wait` waits for another process's
 * lock, or while a start-up call hangs, exits 130 with no stack (and the
 * resume line: test/cli/signals-pipes.slow.test.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockPathFor } from '../../src/journal/index.js';
import { DIST, defer, expectNoStack, REPO, spawnCli, until } from '../helpers/index.js';
import { imageJob, workspace } from '../scheduler/helpers.js';

/**
 * A second real process that opened the journal for `job` (so holds that job's lock) and keeps it
 * open; SIGKILLed after the test.
 */
async function holdJournal(journalPath: string, job: string): Promise<ChildProcess> {
  const journalModule = path.join(DIST, 'journal', 'index.js');
  const script = `
    const { openJournal } = await import(${JSON.stringify(journalModule)});
    await openJournal(${JSON.stringify(journalPath)}, { job: ${JSON.stringify(job)} });
    process.stdout.write('held\\n');
    setInterval(() => {}, 60_000);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  defer(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await closed;
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString('utf8')));
  await until(
    () => {
      if (child.exitCode !== null) throw new Error(`the holder exited with ${child.exitCode}`);
      return out.includes('held');
    },
    { timeoutMs: 20_000, what: 'the holder to take the lock' },
  );
  return child;
}

describe('ibatch exits on errors (real process)', () => {
  it.each([
    ['0', '--time-scale', 'a number > 0'],
    ['-3', '--time-scale', 'a number > 0'],
    ['NaN', '--time-scale', 'a number > 0'],
    ['xml', '--log-format', 'one of pretty, json'],
  ])(
    '`run --emulator` with the bad value `%s` of %s: a usage error, exit 2, one line, no stack',
    async (value, flag, expected) => {
      const ws = workspace(imageJob({ name: 'flags', n: 1 }));
      const run = spawnCli(['run', ws.jobPath, '--emulator', flag, value], { cwd: ws.dir });
      const { code } = await run.exited;
      expect(code, run.stderr()).toBe(2);
      expect(run.stderr().trim()).toBe(
        `ibatch: Expected \`${flag}\` to be ${expected}, got \`${value}\``,
      );
      expectNoStack(run.stderr());
    },
    30_000,
  );

  it('`emulator --port -1` is a usage error naming the flag', async () => {
    const run = spawnCli(['emulator', '--port', '-1'], { cwd: REPO });
    expect((await run.exited).code, run.stderr()).toBe(2);
    expect(run.stderr()).toContain('Expected `--port` to be an integer >= 0, got `-1`');
    expectNoStack(run.stderr());
  }, 30_000);

  it('SIGINT while `run --wait` waits for another process holding the journal: exit 130, no stack', async () => {
    const ws = workspace(imageJob({ name: 'wait-int', n: 1 }));
    const holder = await holdJournal(ws.journalPath, 'wait-int');
    expect(existsSync(lockPathFor(ws.journalPath, 'wait-int'))).toBe(true);
    const run = spawnCli(['run', ws.jobPath, '--emulator', '--wait'], {
      env: { IBATCH_LOG_FORMAT: 'json' },
      cwd: ws.dir,
    });
    await until(() => run.stderr().includes(`waiting for process ${holder.pid}`), {
      timeoutMs: 20_000,
      what: 'the run to wait for the lock',
    });
    run.child.kill('SIGINT');
    const { code } = await run.exited;
    expect(code, run.stderr()).toBe(130);
    expect(run.stderr()).toContain('ibatch: interrupted');
    expect(run.stderr()).toContain('Run the same command again to resume');
    expectNoStack(run.stderr());
    expect(holder.exitCode).toBeNull(); // the holder's lock was left alone
  }, 30_000);

  it('SIGINT while a start-up call hangs: exit 130, no stack', async () => {
    const ws = workspace(imageJob({ name: 'startup-int', n: 1 }));
    let seen = 0;
    // Accepts every request and never answers.
    const server = createServer(() => {
      seen++;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    defer(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const { port } = server.address() as AddressInfo;
    const run = spawnCli(['run', ws.jobPath], {
      env: {
        IBATCH_BASE_URL: `http://127.0.0.1:${port}/api/v1`,
        IBATCH_API_KEY: 'ifk_live_cli_errors_test_0123456789',
        IBATCH_LOG_FORMAT: 'json',
      },
      cwd: ws.dir,
    });
    await until(() => seen > 0, { timeoutMs: 20_000, what: 'a start-up request' });
    run.child.kill('SIGINT');
    const { code } = await run.exited;
    expect(code, run.stderr()).toBe(130);
    expect(run.stderr()).toContain('ibatch: interrupted');
    expectNoStack(run.stderr());
  }, 30_000);
});
