/**
 * `ibatch status` and `ibatch report` read the journal alone: runs of a job,
 * per-step progress, spend against the budget, failures and how to resume;
 * the numbers must match the journal and the emulator's ledger. Run
 * in-process (runCli) against a real emulator over HTTP and real SQLite files.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { StatusDocument } from '../../src/cli/status-view.js';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { openJournal } from '../../src/journal/index.js';
import { runCliCaptured, testEmulator } from '../helpers/index.js';
import {
  charges,
  envFor,
  imageJob,
  ledgerNet,
  type Workspace,
  workspace,
} from '../scheduler/helpers.js';

const SCALE = 30;
let em: RunningEmulator;
let ws: Workspace;

beforeEach(async () => {
  em = await testEmulator({ timeScale: SCALE });
});

async function statusJson(args: string[], env: NodeJS.ProcessEnv = {}): Promise<StatusDocument> {
  const result = await runCliCaptured(['status', ...args, '--json'], env, ws.dir);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as StatusDocument;
}

describe('ibatch status', () => {
  it('a finished run with a blocked item: progress, spend = ledger, failures, no resume', async () => {
    ws = workspace(imageJob({ name: 'status-done', n: 4 }));
    await em.admin.scriptFaults([
      { endpoint: 'createGeneration', fault: 'safety-block', times: 1 },
    ]);
    const run = await runCliCaptured(
      ['run', ws.jobPath, '--run-id', 'st-1'],
      envFor(em, SCALE),
      ws.dir,
    );
    expect(run.code, run.stderr).toBe(1);

    const doc = await statusJson([ws.jobPath]);
    const ledger = await charges(em);
    expect(doc.runs.map((r) => r.runId)).toEqual(['st-1']);
    expect(doc.run).toMatchObject({
      runId: 'st-1',
      jobName: 'status-done',
      status: 'completed_with_failures',
      finished: true,
      notBefore: null,
      waitMs: 0,
    });
    expect(doc.run?.outputDir).toBe(path.join(ws.dir, 'out'));
    expect(doc.steps).toEqual([
      {
        id: 'shots',
        total: 4,
        done: 3,
        inFlight: 0,
        failed: 1,
        queued: 0,
        states: { succeeded: 3, blocked: 1 },
      },
    ]);
    expect(doc.spend).toMatchObject({
      charged: ledger.reduce((s, e) => s + e.amount, 0),
      net: await ledgerNet(em),
      refunded: 0,
      reserved: 0,
      budget: null,
      remaining: null,
    });
    expect(doc.failures).toHaveLength(1);
    expect(doc.failures[0]).toMatchObject({ step: 'shots', state: 'blocked' });
    expect(doc.failures[0]?.error).toMatch(/safety/i);
    expect(doc.resume).toBeNull();

    const text = await runCliCaptured(['status', ws.jobPath], {}, ws.dir);
    expect(text.stdout).toMatch(/run st-1 of status-done: completed_with_failures/);
    expect(text.stdout).toMatch(/shots\s+3\/4 done, 0 in flight, 1 failed, 0 queued/);
    expect(text.stdout).not.toMatch(/to resume/);
  }, 60_000);

  it('a run stopped by its budget: numbers match the journal and ledger, and it says how to resume', async () => {
    ws = workspace(imageJob({ name: 'status-stopped', n: 6, budget: 5 }));
    const run = await runCliCaptured(['run', ws.jobPath], envFor(em, SCALE), ws.dir);
    expect(run.code, run.stderr).toBe(3);

    const doc = await statusJson([]); // journal of the cwd, newest run
    const journal = await openJournal(ws.journalPath, { readonly: true });
    const [record] = journal.listRuns();
    const spend = journal.spendSummary(record!.runId);
    journal.close();
    const charged = (await charges(em)).length;
    expect(doc.run).toMatchObject({
      runId: record?.runId,
      status: 'stopped_credits',
      finished: false,
    });
    expect(doc.steps[0]).toMatchObject({
      id: 'shots',
      total: 6,
      done: charged,
      failed: 0,
      inFlight: 0,
      queued: 6 - charged,
    });
    expect(doc.spend).toMatchObject({ ...spend, budget: 5, remaining: 5 - spend.committed });
    expect(doc.spend?.net).toBe(await ledgerNet(em));
    expect(doc.spend?.net).toBeLessThanOrEqual(5);
    expect(doc.resume).toContain(`ibatch run ${ws.jobPath} --run-id ${record?.runId}`);

    const byId = await statusJson([record!.runId, '--journal', ws.journalPath]);
    expect(byId.run?.runId).toBe(record?.runId);
    const text = await runCliCaptured(['status', ws.jobPath], {}, ws.dir);
    expect(text.stdout).toMatch(/to resume: raise the job's budget/);
    expect(text.stdout).toMatch(/credits: \d+ net of 5 budget/);
  }, 60_000);

  it('exits 2 when the journal, the job or the run is missing', async () => {
    ws = workspace(imageJob({ name: 'status-none', n: 1 }));
    const noJournal = await runCliCaptured(['status', ws.jobPath], {}, ws.dir);
    expect(noJournal.code).toBe(2);
    expect(noJournal.stderr).toMatch(/No journal/);
    expect((await runCliCaptured(['status', 'missing.yaml'], {}, ws.dir)).code).toBe(2);
    await runCliCaptured(['run', ws.jobPath], envFor(em, SCALE), ws.dir);
    const noRun = await runCliCaptured(['status', 'no-such-run'], {}, ws.dir);
    expect(noRun.code).toBe(2);
    expect(noRun.stderr).toMatch(/No run no-such-run/);
  }, 60_000);
});

describe('ibatch report', () => {
  it('rebuilds manifest.jsonl, manifest.csv and report.html of a run from the journal', async () => {
    ws = workspace(imageJob({ name: 'report-job', n: 3 }));
    const run = await runCliCaptured(
      ['run', ws.jobPath, '--run-id', 'rp-1'],
      envFor(em, SCALE),
      ws.dir,
    );
    expect(run.code, run.stderr).toBe(0);
    const out = path.join(ws.dir, 'out');
    const original = readFileSync(path.join(out, 'manifest.jsonl'), 'utf8');
    for (const f of ['manifest.jsonl', 'manifest.csv', 'report.html']) rmSync(path.join(out, f));

    const report = await runCliCaptured(['report', 'rp-1'], {}, ws.dir);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout.trim()).toBe(path.join(out, 'report.html'));
    for (const f of ['manifest.jsonl', 'manifest.csv', 'report.html'])
      expect(existsSync(path.join(out, f))).toBe(true);
    expect(readFileSync(path.join(out, 'manifest.jsonl'), 'utf8')).toBe(original);

    const elsewhere = path.join(ws.dir, 'copy');
    const byJob = await runCliCaptured(['report', ws.jobPath, '--out', elsewhere], {}, ws.dir);
    expect(byJob.code, byJob.stderr).toBe(0);
    expect(
      readFileSync(path.join(elsewhere, 'manifest.jsonl'), 'utf8').trim().split('\n'),
    ).toHaveLength(3);
    expect((await runCliCaptured(['report', 'nope'], {}, ws.dir)).code).toBe(2);
  }, 60_000);
});
