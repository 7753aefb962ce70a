/**
 * An output folder that cannot hold the run's files is refused before
 * anything is spent (exit 2, one line naming the cause), and a local file
 * problem met after payment is never "the network": the run ends exit 2,
 * stopped_error, and the fixed folder gets the paid outputs without a new
 * charge. The emulator's ledger is the judge of what was charged.
 */
import {
  chmodSync,
  chownSync,
  mkdirSync,
  readdirSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import {
  expectNoStack,
  runCliCaptured,
  said,
  scaledLimits,
  spawnCli,
  tempDir,
  testEmulator,
  until,
} from '../helpers/index.js';

const TIME_SCALE = 10;
const LIMITS = scaledLimits(TIME_SCALE);
const NOBODY = 65534;
/** Who runs the CLI when a folder must refuse it: ourselves, or `nobody` when we are root (whom permissions do not stop). */
const USER = process.getuid?.() === 0 ? { uid: NOBODY, gid: NOBODY } : undefined;

const JOB = `version: 1
name: shape
output: out/sl
generations:
  - id: a
    model: flux-portrait
    filename: "shots/{step}-{n}.{ext}"
    input:
      prompt: "a cat"
`;

async function setUp() {
  const em = await testEmulator({ timeScale: TIME_SCALE });
  const account = em.accounts[0];
  if (!account) throw new Error('no account');
  const work = tempDir('folder-shape');
  writeFileSync(path.join(work, 'job.yaml'), JOB);
  const cli = (...args: string[]) =>
    runCliCaptured(
      [...args, '--base-url', em.baseUrl, ...(args[0] === 'run' ? ['--limits', LIMITS] : [])],
      { IBATCH_API_KEY: account.apiKey, IBATCH_LOG_FORMAT: 'json' },
      work,
    );
  const charges = async () =>
    (await em.admin.ledger(account.id)).filter((e) => e.type === 'charge').length;
  /** The same as a real process of USER (who owns the work folder). */
  const cliAsUser = async (...args: string[]) => {
    const exit = await spawnCli(
      [...args, '--base-url', em.baseUrl, ...(args[0] === 'run' ? ['--limits', LIMITS] : [])],
      {
        cwd: work,
        env: { IBATCH_API_KEY: account.apiKey, IBATCH_LOG_FORMAT: 'json' },
        ...(USER ? { user: USER } : {}),
      },
    ).exited;
    return { code: exit.code ?? -1, stdout: exit.stdout, stderr: exit.stderr };
  };
  return { em, work, cli, cliAsUser, charges };
}

/** Makes `folder` (and its parents under `work`) owned by the CLI's user. */
function ownedByUser(work: string, folder: string): void {
  if (!USER) return;
  for (let at = folder; at.startsWith(work); at = path.dirname(at)) {
    chownSync(at, USER.uid, USER.gid);
  }
}

async function runStatuses(journalPath: string): Promise<string[]> {
  const journal = await openJournal(journalPath, { readonly: true });
  try {
    return journal.listRuns().map((run) => run.status);
  } finally {
    journal.close();
  }
}

describe('the output folder is judged before anything is spent', () => {
  it('a link inside it that leads out: validate, plan and run refuse it (exit 2, naming the link), nothing charged', async () => {
    const { work, cli, charges } = await setUp();
    const bigDisk = path.join(tempDir('bigdisk'), 'shots');
    mkdirSync(bigDisk);
    mkdirSync(path.join(work, 'out', 'sl'), { recursive: true });
    symlinkSync(bigDisk, path.join(work, 'out', 'sl', 'shots'));
    for (const command of ['validate', 'plan', 'run']) {
      const result = await cli(command, 'job.yaml');
      expect(result.code, said(result)).toBe(2);
      expect(result.stderr).toContain(`out/sl/shots is a link to ${bigDisk}, outside`);
      expectNoStack(result.stderr);
    }
    expect(await charges()).toBe(0);
  });

  it('an output folder that is itself a link is fine', async () => {
    const { work, cli, charges } = await setUp();
    const bigDisk = tempDir('bigdisk');
    mkdirSync(path.join(work, 'out'));
    symlinkSync(bigDisk, path.join(work, 'out', 'sl'));
    const result = await cli('run', 'job.yaml');
    expect(result.code, said(result)).toBe(0);
    expect(readdirSync(path.join(bigDisk, 'shots'))).toContain('a-1.png');
    expect(await charges()).toBe(1);
  });

  it('--out under a file: exit 2 with one line, no run recorded, nothing charged', async () => {
    const { work, cli, charges } = await setUp();
    writeFileSync(path.join(work, 'afile'), 'not a folder');
    const result = await cli('run', 'job.yaml', '--out', 'afile/sub');
    expect(result.code, said(result)).toBe(2);
    expect(result.stderr).toContain(`${path.join(work, 'afile')} is a file, not a folder`);
    expectNoStack(result.stderr);
    expect(await charges()).toBe(0);
    const journal = path.join(work, '.ibatch', 'journal.db');
    const runs = await runStatuses(journal).catch(() => []);
    expect(runs).toEqual([]);
  });

  it('a link planted after payment: exit 2 and stopped_error, not unreachable; once removed, the re-run pays nothing more', async () => {
    const { work, cli, charges } = await setUp();
    const outside = tempDir('bigdisk');
    const running = cli('run', 'job.yaml');
    // Paid, not yet downloaded: the link appears where the file will go.
    await until(async () => (await charges()) === 1, { what: 'the charge', timeoutMs: 20_000 });
    mkdirSync(path.join(work, 'out', 'sl'), { recursive: true });
    symlinkSync(outside, path.join(work, 'out', 'sl', 'shots'));
    const first = await running;
    expect(first.code, said(first)).toBe(2);
    expect(said(first)).toContain('goes through a link outside');
    expect(said(first)).not.toContain('(network)');
    expect(await runStatuses(path.join(work, '.ibatch', 'journal.db'))).toEqual(['stopped_error']);
    expect(readdirSync(outside)).toEqual([]);

    unlinkSync(path.join(work, 'out', 'sl', 'shots'));
    const again = await cli('run', 'job.yaml');
    expect(again.code, said(again)).toBe(0);
    expect(readdirSync(path.join(work, 'out', 'sl', 'shots'))).toContain('a-1.png');
    expect(await charges()).toBe(1);
  });

  it("a file where a step's folder goes: validate, plan and run refuse it at the step (exit 2), nothing charged", async () => {
    const { work, cli, charges } = await setUp();
    mkdirSync(path.join(work, 'out', 'sl'), { recursive: true });
    writeFileSync(path.join(work, 'out', 'sl', 'shots'), 'not a folder');
    for (const command of ['validate', 'plan', 'run']) {
      const result = await cli(command, 'job.yaml');
      expect(result.code, said(result)).toBe(2);
      expect(result.stderr).toMatch(
        /job\.yaml:\d+:\d+ {2}generations\[0\]\.filename {2}step a writes its files in out\/sl\/shots, but .*out\/sl\/shots is a file, not a folder/,
      );
      expectNoStack(result.stderr);
    }
    expect(await charges()).toBe(0);
  });

  it("a folder the run writes into that does not take files: validate, plan and run refuse it (exit 2), nothing charged; another folder beside it is not the run's concern", async () => {
    const { work, cliAsUser, charges } = await setUp();
    const out = path.join(work, 'out', 'sl');
    // Another user's folders: the step's, and one the job never writes into.
    mkdirSync(path.join(out, 'shots'), { recursive: true, mode: 0o755 });
    mkdirSync(path.join(out, 'theirs'), { mode: 0o755 });
    ownedByUser(work, out);
    if (!USER) for (const folder of ['shots', 'theirs']) chmodSync(path.join(out, folder), 0o555);
    for (const command of ['validate', 'plan', 'run']) {
      const result = await cliAsUser(command, 'job.yaml');
      expect(result.code, said(result)).toBe(2);
      expect(result.stderr).toContain('out/sl/shots does not take files (EACCES)');
      expect(result.stderr).not.toContain('theirs');
      expectNoStack(result.stderr);
    }
    expect(await charges()).toBe(0);

    // Writable again: the run goes through, the other folder still as it was.
    if (USER) chownSync(path.join(out, 'shots'), USER.uid, USER.gid);
    else chmodSync(path.join(out, 'shots'), 0o755);
    const again = await cliAsUser('run', 'job.yaml');
    expect(again.code, said(again)).toBe(0);
    expect(readdirSync(path.join(out, 'shots'))).toContain('a-1.png');
    expect(await charges()).toBe(1);
  });
});
