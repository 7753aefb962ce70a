/**
 * "Is this the same service?" has one answer (src/shared/service-url.ts),
 * end to end with `ibatch run` processes against the emulator, its ledger as
 * the judge: a run killed with items in flight and run again under another
 * spelling of the same base URL (`localhost` for `127.0.0.1`) resumes, each
 * item charged once and the budget never passed; an unfinished run and a
 * truly different base URL is refused (exit 2, both named, nothing spent);
 * `--service-moved` resumes it at the new address with the same keys, which
 * the service deduplicates. Spawned processes need `npm run build`.
 */
import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import type { RunRecord } from '../../src/journal/index.js';
import { startContractProxy } from '../helpers/contract-proxy.js';
import { defer, type Exit, spawnCli, testEmulator, until } from '../helpers/index.js';
import {
  charges,
  envFor,
  expectOneChargePerItem,
  heldEnv,
  imageJob,
  ledgerNet,
  readRuns,
  type Workspace,
  workspace,
} from '../scheduler/helpers.js';

const SCALE = 30;
/** sdxl-lite items at 2 credits each: 20 in all, so paying them twice (40) passes the budget. */
const N = 10;
const BUDGET = 30;

/** Starts `run`, kills it (-9) once the service has charged a few items, leaving the rest in flight. */
async function killedMidway(em: RunningEmulator, ws: Workspace): Promise<RunRecord> {
  const run = spawnCli(['run', ws.jobPath], { env: heldEnv(em, SCALE), cwd: ws.dir });
  await until(async () => (await charges(em)).length >= 2, {
    timeoutMs: 20_000,
    what: 'a first charge',
  });
  run.child.kill('SIGKILL');
  await run.exited;
  const [killed] = await readRuns(ws.journalPath);
  expect(killed?.status).toBe('running');
  expect((await charges(em)).length).toBeLessThan(N);
  return killed as RunRecord;
}

/** `ibatch ARGS` as a real process in the job's folder. */
function ibatch(ws: Workspace, args: readonly string[], env: NodeJS.ProcessEnv): Promise<Exit> {
  return spawnCli(args, { env, cwd: ws.dir }).exited;
}

describe('one service, however its base URL is spelled', () => {
  it('a killed run resumed under `localhost` (was 127.0.0.1) pays each item once, within the budget', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    expect(em.baseUrl).toContain('://127.0.0.1:');
    const ws = workspace(imageJob({ name: 'spelling-job', n: N, budget: BUDGET }));
    const killed = await killedMidway(em, ws);

    const other = em.baseUrl.replace('://127.0.0.1:', '://LOCALHOST:').replace(/\/?$/, '/');
    const env = { ...envFor(em, SCALE), IBATCH_BASE_URL: other };
    const resumed = await ibatch(ws, ['run', ws.jobPath], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(`run ${killed.runId}`);
    expect((await readRuns(ws.journalPath)).map((r) => r.runId)).toEqual([killed.runId]);
    expectOneChargePerItem(await charges(em), N);
    expect(await ledgerNet(em)).toBeLessThanOrEqual(BUDGET);
  }, 90_000);

  it('an unfinished run and another service: exit 2 naming both, nothing spent; --service-moved resumes it with the same keys', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(imageJob({ name: 'moved-job', n: N, budget: BUDGET }));
    const killed = await killedMidway(em, ws);
    const before = await charges(em);

    // The same service at a new address (another port): no URL can tell it is the same.
    const proxy = await startContractProxy(em.baseUrl);
    defer(() => proxy.stop());
    const env = { ...envFor(em, SCALE), IBATCH_BASE_URL: proxy.baseUrl };
    const refused = await ibatch(ws, ['run', ws.jobPath], env);
    expect(refused.code, refused.stderr).toBe(2);
    const port = (url: string) => new URL(url).port;
    expect(refused.stderr).toContain(`http://localhost:${port(em.baseUrl)}/api/v1`);
    expect(refused.stderr).toContain(`http://localhost:${port(proxy.baseUrl)}/api/v1`);
    expect(refused.stderr).toContain('--service-moved');
    // The account fingerprint says what no URL can: the same key made the run.
    expect(refused.stderr).toContain('with this same API key');
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    // Nothing was sent through the new address but the account read, nothing charged.
    expect(await charges(em)).toEqual(before);
    expect((await readRuns(ws.journalPath)).map((r) => r.runId)).toEqual([killed.runId]);
    // `plan` refuses as `run` would.
    const plan = await ibatch(ws, ['plan', ws.jobPath], env);
    expect(plan.code, plan.stderr).toBe(2);

    const moved = await ibatch(ws, ['run', ws.jobPath, '--service-moved'], env);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toContain(`run ${killed.runId}`);
    expect(moved.stderr).toContain('resumes on');
    const runs = await readRuns(ws.journalPath);
    expect(runs.map((r) => r.runId)).toEqual([killed.runId]);
    expect((runs[0]?.options as { service?: string } | undefined)?.service).toBe(
      `http://localhost:${port(proxy.baseUrl)}/api/v1`,
    );
    // Every key sent before the move was sent again unchanged: the service replayed, never charged twice.
    expectOneChargePerItem(await charges(em), N);
    expect(await ledgerNet(em)).toBeLessThanOrEqual(BUDGET);

    // Moved for good: the next run there is a plain no-op, on the old address it is refused no more.
    const again = await ibatch(ws, ['run', ws.jobPath], env);
    expect(again.code, again.stderr).toBe(0);
    expectOneChargePerItem(await charges(em), N);
  }, 120_000);
});
