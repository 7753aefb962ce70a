/**
 * examples/github-actions/ibatch.yml: an independent validator from the npm
 * registry (@action-validator/cli) accepts it, its structure keeps the promises
 * of docs/ci.md, and its shell steps (run, then the job summary from
 * `ibatch status --json` through jq) are run against an emulator account
 * (its URL and key in the env, as the workflow's variable and secret give
 * them), the ledger judging what a retried attempt and a `fresh` run spend.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { cleanEnv, REPO, runCommand, scaledLimits, testEmulator } from '../helpers/index.js';
import { postgresMissing, type RunningPostgres, startPostgres } from '../helpers/postgres.js';
import { ledgerMark, ledgerSince, NIGHT_SCALE as SCALE } from './nights.js';
import { createHost, type HostSetup } from './setup.js';

const WORKFLOW = path.join(REPO, 'examples/github-actions/ibatch.yml');
const PG_WORKFLOW = path.join(REPO, 'examples/github-actions/ibatch-postgres.yml');
const VALIDATOR = path.join(REPO, 'node_modules/.bin/action-validator');

interface Step {
  readonly name?: string;
  readonly uses?: string;
  readonly run?: string;
  readonly if?: string;
  readonly env?: Record<string, string>;
  readonly with?: Record<string, string>;
}
interface Workflow {
  readonly on: Record<string, unknown>;
  readonly jobs: Record<
    string,
    { env: Record<string, string>; steps: Step[]; services?: Record<string, unknown> }
  >;
}

const workflow = parse(readFileSync(WORKFLOW, 'utf8')) as Workflow;
const job = workflow.jobs.run;
const steps = job?.steps ?? [];
const stepOf = (list: readonly Step[], name: string) => {
  const found = list.find((s) => s.name === name);
  if (!found) throw new Error(`no step named ${name}`);
  return found;
};
const step = (name: string) => stepOf(steps, name);

describe('examples/github-actions/ibatch.yml', () => {
  let host: HostSetup;
  beforeEach(() => {
    host = createHost();
  });

  it('passes action-validator; a broken copy does not', async () => {
    const ok = await runCommand(VALIDATOR, [WORKFLOW], { timeoutMs: 30_000 });
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    const broken = path.join(host.root, 'broken.yml');
    writeFileSync(broken, readFileSync(WORKFLOW, 'utf8').replace('runs-on:', 'runs_on:'));
    const bad = await runCommand(VALIDATOR, [broken], { timeoutMs: 30_000 });
    expect(bad.code).not.toBe(0);
  });

  it('has manual and scheduled triggers, the key from a secret, a journal cache and artifacts', () => {
    expect(workflow.on).toHaveProperty('workflow_dispatch');
    expect(workflow.on).toHaveProperty('schedule');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression
    expect(job?.env.IBATCH_API_KEY).toBe('${{ secrets.IBATCH_API_KEY }}');
    const restore = steps.find((s) => s.uses?.startsWith('actions/cache/restore@'));
    const save = steps.find((s) => s.uses?.startsWith('actions/cache/save@'));
    // Keyed by the job file's path, not its content: an edited job converges from its journal.
    expect(restore?.with?.key).toMatch(/^ibatch-\$\{\{ env\.JOB \}\}-/);
    expect(restore?.with?.key).not.toContain('hashFiles');
    expect(restore?.with?.path).toContain('.ibatch-state');
    // The journal is saved even when the run failed, so the retry resumes.
    expect(save?.if).toBe('always()');
    expect(save?.with?.key).toBe(restore?.with?.key);
    expect(steps.some((s) => s.uses?.startsWith('actions/upload-artifact@'))).toBe(true);
    // Every attempt of a workflow run shares the run id: no run_attempt in it.
    const run = step('Run the job');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression
    expect(run.env?.RUN_ID).toBe('gh-${{ github.run_id }}');
    expect(run.run).toContain('--run-id "$RUN_ID"');
    // A nightly cap; `fresh` (workflow_dispatch) makes steps again on purpose.
    expect(run.run).toContain('--max-spend "$MAX_SPEND"');
    expect(Number(job?.env.MAX_SPEND)).toBeGreaterThan(0);
    expect(run.run).toContain('--fresh');
    expect(workflow.on.workflow_dispatch).toHaveProperty('inputs.fresh');
    expect(job?.env.IBATCH_JOURNAL).toContain('.ibatch-state/');
  });

  it('its run and summary steps work: exit 0, a retry spends 0, a markdown table from status --json', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const workspace = host.srv;
    const summary = path.join(host.root, 'summary.md');
    const env = (fresh = '', runId = 'gh-4242') =>
      cleanEnv({
        PATH: `${path.join(workspace, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
        // What vars.IBATCH_BASE_URL and secrets.IBATCH_API_KEY would hold.
        IBATCH_BASE_URL: em.baseUrl,
        IBATCH_API_KEY: em.accounts[0]!.apiKey,
        IBATCH_LIMITS: scaledLimits(SCALE),
        JOB: 'jobs/campaign.yaml',
        IBATCH_JOURNAL: path.join(workspace, '.ibatch-state/journal.db'),
        OUT_DIR: path.join(workspace, 'out'),
        MAX_SPEND: String(job?.env.MAX_SPEND),
        RUN_ID: runId,
        FRESH: fresh,
        GITHUB_STEP_SUMMARY: summary,
      });
    // npx --no finds the CLI in node_modules/.bin as it would after `npm ci`.
    const runStep = (fresh?: string, runId?: string) =>
      runCommand('bash', ['-e', '-c', step('Run the job').run ?? ''], {
        cwd: workspace,
        env: env(fresh, runId),
        timeoutMs: 90_000,
      });
    const run = await runStep();
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(path.join(workspace, 'out/manifest.jsonl'))).toBe(true);
    expect((await ledgerSince(em, 0)).net).toBe(136);

    // "Re-run jobs": an attempt whose journal cache was restored spends nothing.
    const mark = await ledgerMark(em);
    const retry = await runStep();
    expect(retry.code, retry.stderr).toBe(0);
    expect(await ledgerSince(em, mark)).toEqual({ charges: [], net: 0 });

    const written = await runCommand(
      'bash',
      ['-e', '-c', step('Write the job summary').run ?? ''],
      {
        cwd: workspace,
        env: env(),
        timeoutMs: 30_000,
      },
    );
    expect(written.code, written.stderr).toBe(0);
    const markdown = readFileSync(summary, 'utf8');
    expect(markdown).toContain('### ibatch run `gh-4242`: completed');
    expect(markdown).toContain('| portraits | 2 | 0 | 0 | 0 | 2 |');
    expect(markdown).toContain('| clip | 4 | 0 | 0 | 0 | 4 |');
    expect(markdown).toMatch(/Credits: 136 net \(136 charged, 0 refunded\) of a 200 budget/);

    // Started by hand (a new workflow run) with `fresh: portraits`: the
    // portraits are made again with new keys, the clips made from them with
    // them. The job's `budget: 200` caps the campaign over all runs, so this
    // stops at it (exit 3) without advising a top-up.
    const freshMark = await ledgerMark(em);
    const fresh = await runStep('portraits', 'gh-4243');
    expect(fresh.code, fresh.stderr).toBe(3);
    expect(fresh.stdout + fresh.stderr).toMatch(/budget/);
    expect(fresh.stdout + fresh.stderr).not.toMatch(/top up/);
    expect((await ledgerSince(em, 0)).net).toBeLessThanOrEqual(200);
    // Raise the campaign budget and "Re-run jobs": the same run resumes (same keys).
    const jobFile = path.join(workspace, 'jobs/campaign.yaml');
    writeFileSync(jobFile, readFileSync(jobFile, 'utf8').replace('budget: 200', 'budget: 400'));
    const resumed = await runStep('portraits', 'gh-4243');
    expect(resumed.code, resumed.stderr).toBe(0);
    const spent = await ledgerSince(em, freshMark);
    for (const charge of spent.charges) expect(charge.idempotencyKey).toContain('-gh-4243-');
    const portraits = spent.charges.filter((c) => c.idempotencyKey?.includes('-portraits-'));
    expect(portraits).toHaveLength(2);
  }, 150_000);

  it('the summary step says so when there is no journal yet', async () => {
    const summary = path.join(host.root, 'summary.md');
    mkdirSync(path.join(host.srv, 'empty'));
    copyFileSync(path.join(host.srv, 'jobs/campaign.yaml'), path.join(host.srv, 'empty/job.yaml'));
    const result = await runCommand('bash', ['-e', '-c', step('Write the job summary').run ?? ''], {
      cwd: host.srv,
      env: cleanEnv({
        PATH: `${path.join(host.srv, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
        JOB: 'empty/job.yaml',
        IBATCH_JOURNAL: path.join(host.srv, 'empty/.ibatch-state/journal.db'),
        GITHUB_STEP_SUMMARY: summary,
      }),
      timeoutMs: 30_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(summary, 'utf8')).toContain('found no run');
  });
});

describe('examples/github-actions/ibatch-postgres.yml (the PostgreSQL journal variant)', () => {
  const variant = parse(readFileSync(PG_WORKFLOW, 'utf8')) as Workflow;
  const pgJob = variant.jobs.run;
  const pgSteps = pgJob?.steps ?? [];
  let server: RunningPostgres;
  let host: HostSetup;
  beforeEach(() => {
    host = createHost();
  });
  beforeAll(async () => {
    if (!postgresMissing) server = await startPostgres();
  });

  it('passes action-validator', async () => {
    const ok = await runCommand(VALIDATOR, [PG_WORKFLOW], { timeoutMs: 30_000 });
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
  });

  it('has a postgres service container, the journal in PostgreSQL, the password apart, no journal cache', () => {
    expect(pgJob?.services).toHaveProperty('postgres');
    expect(pgJob?.env.IBATCH_JOURNAL).toContain('postgres://');
    // The password travels as PGPASSWORD, from a secret, never in the URL.
    expect(pgJob?.env.IBATCH_JOURNAL).not.toMatch(/postgres:\/\/[^@/]*:[^@/]*@/);
    expect(pgJob?.env.PGPASSWORD).toContain('secrets.IBATCH_PG_PASSWORD');
    expect(pgSteps.some((s) => s.uses?.startsWith('actions/cache'))).toBe(false);
    expect(JSON.stringify(pgSteps)).not.toContain('.ibatch-state');
    // The same run step and run id as the cached workflow.
    expect(stepOf(pgSteps, 'Run the job')).toEqual(
      expect.objectContaining({ env: step('Run the job').env }),
    );
    expect(stepOf(pgSteps, 'Run the job').run).toContain('--run-id "$RUN_ID"');
  });

  it.skipIf(postgresMissing)(
    'its run step on two fresh runners sharing one PostgreSQL: the second spends 0, the summary sees the run',
    async () => {
      const em = await testEmulator({ timeScale: SCALE });
      const journal = new URL(await server.newSchema());
      journal.password = '';
      const summary = path.join(host.root, 'summary.md');
      const runner = (workspace: string) =>
        cleanEnv({
          PATH: `${path.join(workspace, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
          IBATCH_BASE_URL: em.baseUrl,
          IBATCH_API_KEY: em.accounts[0]!.apiKey,
          IBATCH_LIMITS: scaledLimits(SCALE),
          JOB: 'jobs/campaign.yaml',
          // What vars.IBATCH_JOURNAL and secrets.IBATCH_PG_PASSWORD would hold.
          IBATCH_JOURNAL: journal.toString(),
          PGPASSWORD: server.password,
          OUT_DIR: path.join(workspace, 'out'),
          MAX_SPEND: String(pgJob?.env.MAX_SPEND),
          RUN_ID: 'gh-5151',
          FRESH: '',
          GITHUB_STEP_SUMMARY: summary,
        });
      const runStep = (workspace: string, name: string) =>
        runCommand('bash', ['-e', '-c', stepOf(pgSteps, name).run ?? ''], {
          cwd: workspace,
          env: runner(workspace),
          timeoutMs: 90_000,
        });
      const first = await runStep(host.srv, 'Run the job');
      expect(first.code, first.stderr).toBe(0);
      expect((await ledgerSince(em, 0)).net).toBe(136);
      // "Re-run jobs" lands on a fresh runner: no cache, only the shared journal.
      const fresh = createHost();
      const mark = await ledgerMark(em);
      const retry = await runStep(fresh.srv, 'Run the job');
      expect(retry.code, retry.stderr).toBe(0);
      expect(await ledgerSince(em, mark)).toEqual({ charges: [], net: 0 });
      const written = await runStep(fresh.srv, 'Write the job summary');
      expect(written.code, written.stderr).toBe(0);
      expect(readFileSync(summary, 'utf8')).toContain('### ibatch run `gh-5151`: completed');
      const printed = first.stdout + first.stderr + retry.stdout + retry.stderr + written.stderr;
      expect(printed).not.toContain(server.password);
    },
    150_000,
  );
});
