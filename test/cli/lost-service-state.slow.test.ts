/**
 * A resume whose service does not know the generations the journal recorded
 * as submitted (the service restarted fresh, or the key is another
 * account's) used to poll for ever without a word. Real `ibatch run`
 * processes against the emulator: it now ends with exit 5 and the message
 * well within the default deadline, pays nothing, keeps the attempts open
 * (the right key resumes them), and `--forget-lost` makes them again.
 * Spawned processes need `npm run build`.
 */
import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { openJournal } from '../../src/journal/index.js';
import { type Exit, type SpawnedCli, spawnCli, testEmulator, until } from '../helpers/index.js';
import {
  charges,
  envFor,
  expectOneChargePerItem,
  imageJob,
  type Workspace,
  workspace,
} from '../scheduler/helpers.js';

const SCALE = 30;
const N = 4;
/** sdxl-lite takes 10 s at this scale: every generation is in flight when the run is killed. */
const LONG = { 'sdxl-lite': [300_000, 300_000] as const };

async function exited(run: SpawnedCli, what: string): Promise<Exit> {
  // A hang guard, not a speed check: the 404 path ends after a few polls.
  await until(() => run.child.exitCode !== null, { timeoutMs: 60_000, what });
  return run.exited;
}

/** A run of N images killed once every create is charged: N generations submitted, none done. */
async function killedWithEverythingInFlight(e: RunningEmulator, name: string): Promise<Workspace> {
  const ws = workspace(imageJob({ name, n: N }));
  const run = spawnCli(['run', ws.jobPath], { env: envFor(e, SCALE), cwd: ws.dir });
  await until(async () => (await charges(e)).length >= N, {
    timeoutMs: 30_000,
    what: 'every create charged',
  });
  await until(
    async () => {
      const journal = await openJournal(ws.journalPath, { readonly: true });
      try {
        const open = journal.listOpenAttempts(journal.listRuns()[0]?.runId ?? '');
        return open.length === N && open.every((a) => a.state === 'submitted');
      } finally {
        journal.close();
      }
    },
    { timeoutMs: 10_000, what: 'every attempt recorded as submitted' },
  );
  run.child.kill('SIGKILL');
  await run.exited;
  return ws;
}

function expectNotKnownStop(result: Exit): void {
  expect(result.code, result.stderr).toBe(5);
  expect(result.stderr).toMatch(
    /is not known to this service or account \(404 on 3 reads in a row\): was the service \(base URL\) or the API key changed\?/,
  );
  expect(result.stderr).toContain('--forget-lost');
  // Ended by the 404s, not by the generation's deadline (30 min / the run's speed).
  expect(result.stderr).not.toContain('did not finish before its deadline');
}

describe('a resume on a service that does not know its generations', () => {
  it('with another account key: exit 5 with the message, nothing paid, the right key resumes', async () => {
    const e = await testEmulator({ timeScale: SCALE, latency: LONG });
    const ws = await killedWithEverythingInFlight(e, 'otherkey');
    const other = { ...envFor(e, SCALE), IBATCH_API_KEY: e.accounts[1]!.apiKey };
    const wrong = spawnCli(['run', ws.jobPath], { env: other, cwd: ws.dir });
    expectNotKnownStop(await exited(wrong, 'the run with the other key to end'));
    expect(await e.admin.ledger(e.accounts[1]!.id)).toEqual([]);
    const right = spawnCli(['run', ws.jobPath], { env: envFor(e, SCALE), cwd: ws.dir });
    const done = await exited(right, 'the resume with the right key to end');
    expect(done.code, done.stderr).toBe(0);
    expectOneChargePerItem(await charges(e), N);
  }, 120_000);

  it('restarted fresh: exit 5 with the message, then --forget-lost makes them again once', async () => {
    const first = await testEmulator({ timeScale: SCALE, latency: LONG });
    const ws = await killedWithEverythingInFlight(first, 'restarted');
    const port = Number(new URL(first.baseUrl).port);
    const account = first.accounts[0]!;
    await first.stop();
    // The same address and key, none of the state: what a restarted stand-in (or a lost service) is.
    const fresh = await testEmulator({
      port,
      seed: 8,
      timeScale: SCALE,
      accounts: [{ id: account.id, apiKey: account.apiKey }],
    });
    const env = envFor(fresh, SCALE);
    const resume = spawnCli(['run', ws.jobPath], { env, cwd: ws.dir });
    expectNotKnownStop(await exited(resume, 'the resume to end'));
    expect(await charges(fresh)).toEqual([]);
    // Still open: a plain run stops the same way (never remakes silently).
    const again = spawnCli(['run', ws.jobPath], { env, cwd: ws.dir });
    expectNotKnownStop(await exited(again, 'the second resume to end'));
    expect(await charges(fresh)).toEqual([]);
    const forget = spawnCli(['run', ws.jobPath, '--forget-lost'], { env, cwd: ws.dir });
    const done = await exited(forget, 'the --forget-lost run to end');
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toContain('lost by the service (--forget-lost)');
    expectOneChargePerItem(await charges(fresh), N);
  }, 120_000);
});
