/**
 * `status JOB.yaml` and `report JOB.yaml` read what the job's newest run
 * recorded of the job file (src/scheduler/job-facts.ts) instead of expanding
 * an unchanged one, and say what the expansion says: the same removed and
 * changed counts, review counts and manifest as a copy of the folder, whose
 * other paths make them expand the job file. After the rows file or the job
 * file changed, they expand it again. Real `ibatch` processes (`npm run
 * build` first) against the emulator.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJob } from '../../src/job/index.js';
import { openJournal } from '../../src/journal/index.js';
import { knownFromJournal } from '../../src/library/index.js';
import { spawnCli, tempDir, testEmulator } from '../helpers/index.js';
import { envFor } from '../scheduler/helpers.js';

const job = (prompt: string) =>
  [
    'version: 1',
    'name: facts',
    'output: out',
    'generations:',
    '  - id: hero',
    '    model: ideogram-influencer',
    '    rows: rows.csv',
    `    input: { prompt: "${prompt}" }`,
    '',
  ].join('\n');

const rows = (skus: readonly string[]) => `sku\n${skus.join('\n')}\n`;

interface StatusJson {
  readonly job: { readonly removed: unknown; readonly changed: unknown };
  readonly review: unknown;
}

describe('status and report of an unchanged job file, from the facts its run recorded', () => {
  it('give what expanding the job file gives, and expand it again once it changed', async () => {
    const em = await testEmulator();
    const dir = tempDir('job-facts');
    writeFileSync(path.join(dir, 'job.yaml'), job('shot of {{ sku }}'));
    writeFileSync(path.join(dir, 'rows.csv'), rows(['a', 'b', 'c']));
    const ibatch = (cwd: string, ...args: string[]) =>
      spawnCli(args, { cwd, env: envFor(em, 30) }).exited;
    const status = async (cwd: string): Promise<StatusJson> => {
      const done = await ibatch(cwd, 'status', 'job.yaml', '--json');
      expect(done.code, done.stderr).toBe(0);
      return JSON.parse(done.stdout) as StatusJson;
    };
    const known = async () => {
      const journal = await openJournal(path.join(dir, '.ibatch', 'journal.db'), {
        readonly: true,
      });
      try {
        const loaded = loadJob(path.join(dir, 'job.yaml'), { readsOutputsOnly: true });
        return await knownFromJournal(loaded, journal);
      } finally {
        journal.close();
      }
    };
    /** The figures of `dir` (from the facts when they hold) and of a copy (always expanded). */
    const bothWays = async () => {
      const copy = tempDir('job-facts-copy');
      cpSync(dir, copy, { recursive: true });
      const [here, there] = [await status(dir), await status(copy)];
      expect({ job: here.job, review: here.review }).toEqual({
        job: there.job,
        review: there.review,
      });
      return here;
    };

    let run = await ibatch(dir, 'run', 'job.yaml');
    expect(run.code, run.stderr).toBe(0);
    expect(await known()).toEqual({ removed: [], changed: [] });
    expect((await bothWays()).job).toEqual({
      name: 'facts',
      budget: null,
      spend: expect.anything(),
      remaining: null,
      removed: [],
      changed: [],
    });
    // The report's manifest: every row current, as the expanded job file says.
    const copy = tempDir('job-facts-report');
    cpSync(dir, copy, { recursive: true });
    const manifests = [];
    for (const cwd of [dir, copy]) {
      const report = await ibatch(cwd, 'report', 'job.yaml', '--out', 'again');
      expect(report.code, report.stderr).toBe(0);
      manifests.push(readFileSync(path.join(cwd, 'again', 'manifest.jsonl'), 'utf8'));
    }
    expect(manifests[0]).toBe(manifests[1]);
    expect(
      manifests[0]?.split('\n').filter((line) => line.includes('"current":true')),
    ).toHaveLength(3);

    // A row removed: the rows file's bytes differ, so the job file is expanded.
    writeFileSync(path.join(dir, 'rows.csv'), rows(['a', 'b']));
    expect(await known()).toBeUndefined();
    expect((await bothWays()).job).toMatchObject({
      removed: [{ step: 'hero', items: 1 }],
      changed: [],
    });

    // The prompt changed: every item is made otherwise than it was.
    writeFileSync(path.join(dir, 'job.yaml'), job('photo of {{ sku }}'));
    expect(await known()).toBeUndefined();
    expect((await bothWays()).job).toMatchObject({
      removed: [{ step: 'hero', items: 1 }],
      changed: [{ step: 'hero', items: 2 }],
    });

    // A run of the changed job: its facts say an item was removed, which
    // only the job's keys tell apart from the rest: expanded again.
    run = await ibatch(dir, 'run', 'job.yaml');
    expect(run.code, run.stderr).toBe(0);
    expect(await known()).toBeUndefined();
    expect((await bothWays()).job).toMatchObject({
      removed: [{ step: 'hero', items: 1 }],
      changed: [],
    });
  }, 180_000);
});
