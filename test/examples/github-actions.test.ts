/**
 * examples/github-actions/ibatch.yml: an independent validator from the npm
 * registry (@action-validator/cli) accepts it, its structure keeps the promises
 * of docs/ci.md, and its shell steps (run, then the job summary from
 * `ibatch status --json` through jq) are run against the emulator.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { cleanEnv, REPO, runCommand } from '../helpers/index.js';
import { createHost, EMULATOR_FLAGS, type HostSetup } from './setup.js';

const WORKFLOW = path.join(REPO, 'examples/github-actions/ibatch.yml');
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
  readonly jobs: Record<string, { env: Record<string, string>; steps: Step[] }>;
}

const workflow = parse(readFileSync(WORKFLOW, 'utf8')) as Workflow;
const job = workflow.jobs.run;
const steps = job?.steps ?? [];
const step = (name: string) => {
  const found = steps.find((s) => s.name === name);
  if (!found) throw new Error(`no step named ${name}`);
  return found;
};

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
    expect(restore?.with?.key).toContain('hashFiles(env.JOB)');
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
    expect(job?.env.IBATCH_JOURNAL).toContain('.ibatch-state/');
  });

  it('its run and summary steps work: exit 0 and a markdown table from status --json', async () => {
    const workspace = host.srv;
    const summary = path.join(host.root, 'summary.md');
    const env = cleanEnv({
      PATH: `${path.join(workspace, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
      JOB: 'jobs/campaign.yaml',
      IBATCH_JOURNAL: path.join(workspace, '.ibatch-state/journal.db'),
      OUT_DIR: path.join(workspace, 'out'),
      RUN_ID: 'gh-4242',
      GITHUB_STEP_SUMMARY: summary,
    });
    // npx --no finds the CLI in node_modules/.bin as it would after `npm ci`.
    const script = (name: string) => {
      const text = step(name).run ?? '';
      return text.replace(
        'npx --no ibatch run "$JOB"',
        `npx --no ibatch run "$JOB" ${EMULATOR_FLAGS}`,
      );
    };
    const run = await runCommand('bash', ['-e', '-c', script('Run the job')], {
      cwd: workspace,
      env,
      timeoutMs: 90_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(path.join(workspace, 'out/manifest.jsonl'))).toBe(true);

    // A retried attempt on a fresh runner whose journal cache was restored.
    const retry = await runCommand('bash', ['-e', '-c', script('Run the job')], {
      cwd: workspace,
      env,
      timeoutMs: 90_000,
    });
    expect(retry.code, retry.stderr).toBe(0);

    const written = await runCommand('bash', ['-e', '-c', script('Write the job summary')], {
      cwd: workspace,
      env,
      timeoutMs: 30_000,
    });
    expect(written.code, written.stderr).toBe(0);
    const markdown = readFileSync(summary, 'utf8');
    expect(markdown).toContain('### ibatch run `gh-4242`: completed');
    expect(markdown).toContain('| portraits | 2 | 0 | 0 | 0 | 2 |');
    expect(markdown).toContain('| clip | 4 | 0 | 0 | 0 | 4 |');
    expect(markdown).toMatch(/Credits: 136 net \(136 charged, 0 refunded\) of a 200 budget/);
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
