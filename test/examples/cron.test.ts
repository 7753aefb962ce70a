/**
 * examples/cron/crontab: the scheduled line is parsed like cron does (five
 * time fields, `\%` unescaped, the file's own PATH) and run by /bin/sh against
 * the emulator in a temporary host layout.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { beforeEach, describe, expect, it } from 'vitest';
import { cleanEnv, REPO, runCommand } from '../helpers/index.js';
import { createHost, type HostSetup } from './setup.js';

interface CronEntry {
  readonly schedule: readonly string[];
  readonly command: string;
}

interface Crontab {
  readonly env: Readonly<Record<string, string>>;
  readonly entries: readonly CronEntry[];
}

const FIELD = /^(\*|\d+(-\d+)?)(\/\d+)?(,(\*|\d+(-\d+)?)(\/\d+)?)*$/;

function parseCrontab(text: string): Crontab {
  const env: Record<string, string> = {};
  const entries: CronEntry[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const assignment = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (assignment) {
      env[assignment[1] as string] = (assignment[2] as string).replace(/^"(.*)"$/, '$1');
      continue;
    }
    const fields = line.split(/\s+/);
    const schedule = fields.slice(0, 5);
    for (const field of schedule) expect(field, `cron field in: ${line}`).toMatch(FIELD);
    const command = line.replace(/^(\S+\s+){5}/, '');
    // Cron turns an unescaped % into a newline (stdin): the line must escape them all.
    expect(command.replaceAll('\\%', '')).not.toContain('%');
    entries.push({ schedule, command: command.replaceAll('\\%', '%') });
  }
  return { env, entries };
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

  it('has one scheduled ibatch run with flock, an env file and a log', () => {
    expect(crontab.env.SHELL).toBe('/bin/sh');
    expect(crontab.entries).toHaveLength(1);
    const { command } = crontab.entries[0] as CronEntry;
    expect(command).toMatch(/flock -n \S+/);
    expect(command).toMatch(/\. \/etc\/ibatch\/ibatch\.env/);
    expect(command).toMatch(/ibatch run jobs\/campaign\.yaml --run-id/);
    expect(command).toMatch(/>> \/var\/log\/ibatch\/\S+ 2>&1/);
  });

  it('runs the command it names: exit 0, the run summary in the log', async () => {
    const { command } = crontab.entries[0] as CronEntry;
    const result = await runCommand('/bin/sh', ['-c', host.substitute(command)], {
      cwd: host.root,
      env: cronEnv(),
      timeoutMs: 90_000,
    });
    const log = readFileSync(path.join(host.logDir, 'campaign.log'), 'utf8');
    expect(result.code, log).toBe(0);
    expect(log).toMatch(/exit 0\n$/);
    expect(log).toMatch(/6 succeeded, 0 failed/);
    expect(log).not.toContain('sk-example-never-used');
    expect(existsSync(path.join(host.srv, 'jobs/out/quickstart/manifest.jsonl'))).toBe(true);
    // The run is named by the date, as the line asks.
    expect(log).toMatch(/run campaign-\d{4}-\d{2}-\d{2}:/);
  }, 120_000);

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
      const result = await runCommand('/bin/sh', ['-c', substituted], {
        cwd: host.root,
        env: cronEnv(),
        timeoutMs: 30_000,
      });
      const log = readFileSync(path.join(host.logDir, 'campaign.log'), 'utf8');
      expect(log).toMatch(/exit 1\n$/);
      expect(log).not.toMatch(/succeeded/);
      expect(result.code).toBe(0); // the trailing echo of the exit code succeeded
      expect(existsSync(path.join(host.srv, 'jobs/.ibatch/journal.db'))).toBe(false);
    } finally {
      const exited = once(holder, 'exit');
      holder.stdin.end();
      await exited;
    }
  }, 60_000);
});
