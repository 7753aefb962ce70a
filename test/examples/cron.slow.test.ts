/**
 * examples/cron/crontab: the scheduled line is parsed like cron does (five
 * time fields, `\%` unescaped, the file's own PATH) and run by /bin/sh in a
 * temporary host layout, night after night against one emulator account over
 * the growing CSV of examples/product-campaign: the ledger judges what each
 * night spent. The commented "fresh content every day" line is run too.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { cleanEnv, REPO, runCommand } from '../helpers/index.js';
import {
  downloadedFiles,
  expectKept,
  expectOnlyTheNewRow,
  ledgerMark,
  ledgerSince,
  NEW_ROW,
  nightlyHost,
} from './nights.js';
import { createHost, type HostSetup } from './setup.js';

interface CronEntry {
  readonly schedule: readonly string[];
  readonly command: string;
}

interface Crontab {
  readonly env: Readonly<Record<string, string>>;
  readonly entries: readonly CronEntry[];
  /** Entries the comments offer as a replacement (`# m h dom mon dow command`). */
  readonly alternatives: readonly CronEntry[];
}

const FIELD = /^(\*|\d+(-\d+)?)(\/\d+)?(,(\*|\d+(-\d+)?)(\/\d+)?)*$/;

const COMMENTED_ENTRY = /^#\s*((\S+\s+){5}cd .*)$/;

function entryOf(line: string): CronEntry {
  const fields = line.split(/\s+/);
  const schedule = fields.slice(0, 5);
  for (const field of schedule) expect(field, `cron field in: ${line}`).toMatch(FIELD);
  const command = line.replace(/^(\S+\s+){5}/, '');
  // Cron turns an unescaped % into a newline (stdin): the line must escape them all.
  expect(command.replaceAll('\\%', '')).not.toContain('%');
  return { schedule, command: command.replaceAll('\\%', '%') };
}

function parseCrontab(text: string): Crontab {
  const env: Record<string, string> = {};
  const entries: CronEntry[] = [];
  const alternatives: CronEntry[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const commented = COMMENTED_ENTRY.exec(line);
    if (commented) alternatives.push(entryOf(commented[1] as string));
    if (line === '' || line.startsWith('#')) continue;
    const assignment = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (assignment) {
      env[assignment[1] as string] = (assignment[2] as string).replace(/^"(.*)"$/, '$1');
      continue;
    }
    entries.push(entryOf(line));
  }
  return { env, entries, alternatives };
}

describe('examples/cron/crontab', () => {
  let host: HostSetup;
  const crontab = parseCrontab(readFileSync(path.join(REPO, 'examples/cron/crontab'), 'utf8'));

  beforeEach(() => {
    host = createHost();
  });

  function cronEnv(): NodeJS.ProcessEnv {
    // Cron's environment is nearly empty: HOME, LOGNAME and the crontab's own variables.
    return {
      ...cleanEnv(),
      ...crontab.env,
      PATH: `${host.nodeDir}:${crontab.env.PATH ?? '/usr/bin:/bin'}`,
    };
  }

  /** One night: the entry's line through /bin/sh; the log's text afterwards. */
  async function night(entry: CronEntry | undefined): Promise<string> {
    const result = await runCommand('/bin/sh', ['-c', host.substitute(entry?.command ?? '')], {
      cwd: host.root,
      env: cronEnv(),
      timeoutMs: 90_000,
    });
    const log = readFileSync(path.join(host.logDir, 'campaign.log'), 'utf8');
    expect(result.code, log).toBe(0); // the trailing echo of the exit code succeeded
    expect(log).not.toContain(host.apiKey);
    return log;
  }

  /** The host of a test that runs night after night against one emulator account. */
  async function nights(): Promise<RunningEmulator> {
    const nightly = await nightlyHost();
    host = nightly.host;
    return nightly.em;
  }

  it('has one scheduled ibatch run with flock, an env file, a nightly cap and a log', () => {
    expect(crontab.env.SHELL).toBe('/bin/sh');
    expect(crontab.entries).toHaveLength(1);
    const { command } = crontab.entries[0] as CronEntry;
    expect(command).toMatch(/flock -n \S+/);
    expect(command).toMatch(/\. \/etc\/ibatch\/ibatch\.env/);
    expect(command).toMatch(/ibatch run jobs\/campaign\.yaml --max-spend \d+ /);
    // The job file is the desired state: no dated run id is needed any more.
    expect(command).not.toContain('--run-id');
    expect(command).toMatch(/>> \/var\/log\/ibatch\/\S+ 2>&1/);
    expect(crontab.alternatives).toHaveLength(1);
    expect(crontab.alternatives[0]?.command).toMatch(/ibatch run \S+ --fresh \S+ --max-spend \d+/);
  });

  it('runs the command it names with --emulator: exit 0, the run summary in the log', async () => {
    const log = await night(crontab.entries[0]);
    expect(log).toMatch(/exit 0\n$/);
    expect(log).toMatch(/6 succeeded, 0 failed/);
    expect(existsSync(path.join(host.srv, 'jobs/out/quickstart/manifest.jsonl'))).toBe(true);
  }, 120_000);

  it('night 2 with one more CSV row spends exactly that row; an unchanged night 3 spends 0', async () => {
    const em = await nights();
    const out = path.join(host.srv, 'jobs/out/product-campaign');
    const first = await night(crontab.entries[0]);
    expect(first).toMatch(/exit 0\n$/);
    expect(first).toMatch(/9 succeeded, 0 failed/);
    const night1 = await ledgerSince(em, 0);
    expect(night1.charges).toHaveLength(9);
    const files = downloadedFiles(out);

    host.addRow(NEW_ROW);
    const mark2 = await ledgerMark(em);
    const second = await night(crontab.entries[0]);
    expect(second).toMatch(/exit 0\n$/);
    await expectOnlyTheNewRow(em, mark2, out, files);

    const mark3 = await ledgerMark(em);
    const third = await night(crontab.entries[0]);
    expect(third).toMatch(/exit 0\n$/);
    expect(third).toMatch(/nothing to do: 12 of 12 item\(s\) are done/);
    expect(await ledgerSince(em, mark3)).toEqual({ charges: [], net: 0 });
  }, 150_000);

  it('the "fresh content every day" line makes its step again each night, old files kept', async () => {
    const em = await nights();
    const out = path.join(host.srv, 'jobs/out/product-campaign');
    expect(await night(crontab.entries[0])).toMatch(/exit 0\n$/);
    const files = downloadedFiles(out);
    const fresh = crontab.alternatives[0];
    const step = /--fresh (\S+)/.exec(fresh?.command ?? '')?.[1] as string;
    for (let n = 0; n < 2; n += 1) {
      const mark = await ledgerMark(em);
      expect(await night(fresh)).toMatch(/exit 0\n$/);
      const spent = await ledgerSince(em, mark);
      // The moodboard: one 2-copy sdxl-lite item per row, 4 credits each.
      expect(spent.charges).toHaveLength(3);
      expect(spent.net).toBe(12);
      for (const charge of spent.charges) expect(charge.idempotencyKey).toContain(`-${step}-`);
    }
    expectKept(out, files);
    expect(downloadedFiles(out).size).toBe(files.size + 2 * 6);
  }, 150_000);

  it('exits at once without running while the previous run holds the lock', async () => {
    const { command } = crontab.entries[0] as CronEntry;
    const substituted = host.substitute(command);
    const lockFile = /flock -n (\S+)/.exec(substituted)?.[1] as string;
    // Holds the lock until its stdin closes.
    const holder = spawn('flock', [lockFile, 'sh', '-c', 'echo locked; cat'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    try {
      const [line] = (await once(createInterface({ input: holder.stdout }), 'line')) as [string];
      expect(line).toBe('locked');
      const log = await night(crontab.entries[0]);
      expect(log).toMatch(/exit 1\n$/);
      expect(log).not.toMatch(/succeeded/);
      expect(existsSync(path.join(host.srv, 'jobs/.ibatch/journal.db'))).toBe(false);
    } finally {
      const exited = once(holder, 'exit');
      holder.stdin.end();
      await exited;
    }
  }, 60_000);
});
