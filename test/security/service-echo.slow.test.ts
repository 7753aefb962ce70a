/**
 * A service that quotes the caller's API key back in its own texts
 * (a failed generation's and training's `error`, a 4xx/5xx `message` and
 * `details`) must not get the key onto disk or into the output: the client
 * redacts at the boundary where service text comes in, and every sink (the
 * journal, manifest, report, logs, status) redacts again through the one
 * `redact`. Real `ibatch run` / `ibatch status` processes against the
 * emulator's `echoKeyInErrors` behaviour; then every byte left behind is read.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { runCliCaptured, tempDir } from '../helpers/index.js';
import { allFiles, emulator, LIMITS, leaksIn, SECURITY_JOB, writeJob } from './helpers.js';

/**
 * The security job (uploads, training, generations) plus an edit of an asset
 * that is not the account's (a 400). The URL is on the service's origin: one
 * of another origin is refused before spending and never reaches it.
 */
const echoJob = (origin: string) => `${SECURITY_JOB}  - id: foreign
    model: nano-edit
    input:
      prompt: "studio background"
      image: ${origin}/assets/00000000-0000-4000-8000-000000000000.png
`;

describe('the service echoing the API key in its texts', () => {
  it('keeps the key out of the journal, manifest, report, outputs, logs and status', async () => {
    const em = await emulator({ behaviour: { echoKeyInErrors: true } });
    const account = em.accounts[0];
    if (!account) throw new Error('no account');
    await em.admin.scriptFaults([
      { fault: 'training-fail', endpoint: 'createTraining', times: 5 },
      { fault: 'generation-fail', endpoint: 'createGeneration', times: 20 },
      { fault: 'error-503', endpoint: 'getImage' },
      { fault: 'rate-limit-burst', endpoint: 'previewCredits' },
    ]);
    const dir = tempDir('security');
    const jobPath = await writeJob(dir, echoJob(new URL(em.baseUrl).origin));
    const env = { IBATCH_API_KEY: account.apiKey };
    const outputs: Array<{ file: string; bytes: string }> = [];
    for (const format of ['json', 'pretty'] as const) {
      const run = await runCliCaptured(
        ['run', jobPath, '--base-url', em.baseUrl, '--limits', LIMITS, '--log-format', format],
        env,
        dir,
      );
      outputs.push(
        { file: `run ${format} stdout`, bytes: run.stdout },
        { file: `run ${format} stderr`, bytes: run.stderr },
      );
      // Items failed for good: the run finishes with failures, not a crash.
      expect(run.code, run.stderr).toBe(1);
    }
    for (const args of [
      ['status', jobPath],
      ['status', jobPath, '--json'],
      ['report', jobPath],
    ]) {
      const result = await runCliCaptured(args, env, dir);
      expect(result.code, result.stderr).toBe(0);
      outputs.push(
        { file: `${args.join(' ')} stdout`, bytes: result.stdout },
        { file: `${args.join(' ')} stderr`, bytes: result.stderr },
      );
    }

    // The service really did echo the key in each kind of text (so this test can fail).
    const faults = (await em.admin.stats()).faults.map((f) => f.fault);
    expect(faults).toEqual(
      expect.arrayContaining(['training-fail', 'generation-fail', 'error-503', 'rate-limit-burst']),
    );
    // Each journal column that holds service text got the echo, redacted. (A
    // training's `error` is not stored: the journal says "training failed".)
    const db = new Database(path.join(dir, '.ibatch/journal.db'), { readonly: true });
    try {
      for (const table of ['items', 'attempts']) {
        const errors = db
          .prepare(`SELECT error FROM ${table} WHERE error IS NOT NULL`)
          .pluck()
          .all() as string[];
        expect(
          errors.some((e) => e.includes('[REDACTED]')),
          `${table}.error`,
        ).toBe(true);
      }
    } finally {
      db.close();
    }
    const files = await allFiles(dir);
    const text = files.map((f) => f.bytes.toString('utf8')).join('\n');
    expect(text).toContain('[REDACTED]');
    expect(text).toMatch(/not an uploaded asset or output of this account/);

    expect(
      files
        .map((f) => f.file)
        .filter((f) => /journal\.db$|manifest\.(jsonl|csv)$|report\.html$/.test(f)),
    ).toHaveLength(4);
    expect(leaksIn([...files, ...outputs], account.apiKey)).toEqual([]);
  });
});
