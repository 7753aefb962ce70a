/**
 * The API key never leaves the process except in the Authorization header to
 * the service: not in the journal, logs (pretty and JSON), manifest, report,
 * downloads, stdout/stderr (success or failure), nor the process title / `ps`.
 * Upload PUTs to presigned URLs carry no Authorization at all.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCli, tempDir, until } from '../helpers/index.js';
import { allFiles, emulator, LIMITS, leaksIn, writeJob } from './helpers.js';

/** What a running process shows of itself, as `ps` and /proc do. */
function processTitle(pid: number): { cmdline: string; ps: string } {
  const cmdline = readFileSync(`/proc/${pid}/cmdline`).toString('utf8').replaceAll('\0', ' ');
  const ps = execFileSync('ps', ['-o', 'args=', '-p', String(pid)]).toString('utf8');
  return { cmdline, ps };
}

describe('the API key never leaks', () => {
  it.each(['json', 'pretty'] as const)(
    'a full run (uploads, training, generations) with %s logs: nothing holds the key; PUTs carry no Authorization',
    async (format) => {
      // uploadAuthorization 'reject': a PUT with Authorization would also fail the run.
      const em = await emulator({
        behaviour: { uploadAuthorization: 'reject' },
        latency: { 'flux-portrait': [60_000, 60_000] },
      });
      const account = em.accounts[0];
      if (!account) throw new Error('no account');
      const dir = tempDir('security');
      const jobPath = await writeJob(dir);
      const run = spawnCli(
        ['run', jobPath, '--base-url', em.baseUrl, '--limits', LIMITS, '--log-format', format],
        { cwd: dir, env: { IBATCH_API_KEY: account.apiKey } },
      );
      const pid = run.child.pid;
      if (pid === undefined) throw new Error('spawn failed');
      // Mid-run (a generation is charged and still processing): look at the process title.
      await until(
        async () =>
          (await em.admin.ledger(account.id)).some((e) => e.generationIds) ? true : undefined,
        { timeoutMs: 20_000, what: 'a generation charge' },
      );
      expect(run.child.exitCode, 'the run is still going').toBeNull();
      const title = processTitle(pid);
      expect(title.ps.trim().length).toBeGreaterThan(0);
      expect(leaksIn([{ file: 'cmdline', bytes: title.cmdline }], account.apiKey)).toEqual([]);
      expect(leaksIn([{ file: 'ps', bytes: title.ps }], account.apiKey)).toEqual([]);

      const { code, stdout, stderr } = await run.exited;
      expect(code, stderr).toBe(0);
      expect(stdout).toContain('4 succeeded');

      const files = await allFiles(dir);
      const names = files.map((f) => path.relative(dir, f.file));
      expect(names).toEqual(
        expect.arrayContaining([
          '.ibatch/journal.db',
          'out/security/manifest.jsonl',
          'out/security/manifest.csv',
          'out/security/report.html',
        ]),
      );
      expect(
        leaksIn(
          [...files, { file: 'stdout', bytes: stdout }, { file: 'stderr', bytes: stderr }],
          account.apiKey,
        ),
      ).toEqual([]);
      // The scanner itself finds the key where it is (so the check can fail).
      expect(leaksIn([{ file: 'probe', bytes: `x${account.apiKey}x` }], account.apiKey)).toEqual([
        'probe',
      ]);

      const stats = await em.admin.stats();
      expect(stats.uploadAuthorization).toEqual([]);
      const mine = stats.accounts.find((a) => a.id === account.id);
      expect(mine?.buckets.uploads.total).toBe(3);
    },
  );

  it('error output of a refused key (401 mid-run) and a journal left unfinished hold no key', async () => {
    const em = await emulator({ latency: { 'flux-portrait': [60_000, 60_000] } });
    const account = em.accounts[0];
    if (!account) throw new Error('no account');
    const dir = tempDir('security');
    const jobPath = await writeJob(dir);
    const run = spawnCli(
      ['run', jobPath, '--base-url', em.baseUrl, '--limits', LIMITS, '--log-format', 'pretty'],
      { cwd: dir, env: { IBATCH_API_KEY: account.apiKey } },
    );
    await until(
      async () =>
        (await em.admin.ledger(account.id)).some((e) => e.generationIds) ? true : undefined,
      { timeoutMs: 20_000, what: 'a generation charge' },
    );
    await em.admin.revokeKey(account.apiKey);
    const { code, stdout, stderr } = await run.exited;
    expect(code, stderr).toBe(5);
    expect(`${stdout}${stderr}`).toMatch(/refused the API key/);
    const files = await allFiles(dir);
    expect(
      leaksIn(
        [...files, { file: 'stdout', bytes: stdout }, { file: 'stderr', bytes: stderr }],
        account.apiKey,
      ),
    ).toEqual([]);
  });

  it('a wrong key given at start-up is refused with exit 5 and is not echoed', async () => {
    const em = await emulator();
    const dir = tempDir('security');
    const jobPath = await writeJob(dir);
    const wrongKey = `ifk_live_${'ab12'.repeat(8)}`;
    const run = spawnCli(
      ['run', jobPath, '--base-url', em.baseUrl, '--limits', LIMITS, '--log-format', 'json'],
      { cwd: dir, env: { IBATCH_API_KEY: wrongKey } },
    );
    const { code, stdout, stderr } = await run.exited;
    expect(code, stderr).toBe(5);
    expect(`${stdout}${stderr}`).toContain('IBATCH_API_KEY');
    const files = await allFiles(dir);
    expect(
      leaksIn(
        [...files, { file: 'stdout', bytes: stdout }, { file: 'stderr', bytes: stderr }],
        wrongKey,
      ),
    ).toEqual([]);
  });
});
