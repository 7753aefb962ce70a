/**
 * examples/systemd: the units pass `systemd-analyze verify`, and the service's
 * ExecStart= is run as systemd would run it (its escapes undone, argv split by
 * its quoting rules, WorkingDirectory= and EnvironmentFile= applied) in a
 * temporary host layout, start after start against one emulator account over
 * the growing CSV of examples/product-campaign: the ledger judges what each
 * start spent.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { BIN, cleanEnv, REPO, runCommand } from '../helpers/index.js';
import {
  downloadedFiles,
  expectOnlyTheNewRow,
  ledgerMark,
  ledgerSince,
  NEW_ROW,
  NEW_ROW_CREDITS,
  nightlyHost,
} from './nights.js';
import { createHost, type HostSetup } from './setup.js';

type Unit = Record<string, Record<string, string>>;

function parseUnit(text: string): Unit {
  const unit: Unit = {};
  let section: Record<string, string> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = {};
      unit[header[1] as string] = section;
      continue;
    }
    const eq = line.indexOf('=');
    if (!section || eq < 0) throw new Error(`not a unit line: ${line}`);
    section[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return unit;
}

/** systemd's ExecStart= word splitting (quotes) after undoing `%%` and `$$`. */
function execArgv(value: string): string[] {
  expect(value.replaceAll('%%', '')).not.toContain('%'); // no other specifiers
  const unescaped = value.replaceAll('%%', '%');
  const words: string[] = [];
  const re = /'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (let m = re.exec(unescaped); m; m = re.exec(unescaped)) {
    words.push(m[1] ?? m[2]?.replace(/\\(.)/g, '$1') ?? (m[3] as string));
  }
  // `$$` is a literal `$`; a lone `$NAME` would be systemd's own substitution.
  return words.map((word) => {
    expect(word.replaceAll('$$', '')).not.toMatch(/\$[A-Za-z{]/);
    return word.replaceAll('$$', '$');
  });
}

function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (m) env[m[1] as string] = m[2] as string;
  }
  return env;
}

const hasSystemdAnalyze = (() => {
  try {
    execFileSync('systemd-analyze', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const dir = path.join(REPO, 'examples/systemd');
const serviceText = readFileSync(path.join(dir, 'ibatch.service'), 'utf8');
const service = parseUnit(serviceText);
/** The commented "fresh content every day" replacement of ExecStart=. */
const freshExecStart = /^# ExecStart=(.*)$/m.exec(serviceText)?.[1];
const timer = parseUnit(readFileSync(path.join(dir, 'ibatch.timer'), 'utf8'));

describe('examples/systemd', () => {
  let host: HostSetup;
  beforeEach(() => {
    host = createHost();
  });

  it('has a timer that starts the oneshot service', () => {
    expect(timer.Timer?.Unit).toBe('ibatch.service');
    expect(timer.Timer?.Persistent).toBe('true');
    expect(timer.Install?.WantedBy).toBe('timers.target');
    expect(service.Service?.Type).toBe('oneshot');
    expect(service.Service?.EnvironmentFile).toBe('/etc/ibatch/ibatch.env');
    const argv = execArgv(service.Service?.ExecStart ?? '');
    // A plain nightly run with a nightly cap: no dated run id is needed any more.
    expect(argv.join(' ')).toMatch(/ibatch run jobs\/campaign\.yaml --max-spend \d+$/);
    expect(argv.join(' ')).not.toContain('--run-id');
    expect(execArgv(freshExecStart ?? '').join(' ')).toMatch(
      /ibatch run jobs\/campaign\.yaml --fresh \S+ --max-spend \d+$/,
    );
  });

  it.skipIf(!hasSystemdAnalyze)('passes systemd-analyze verify and calendar', async () => {
    const verify = await runCommand(
      'systemd-analyze',
      ['verify', path.join(dir, 'ibatch.timer'), path.join(dir, 'ibatch.service')],
      { timeoutMs: 30_000 },
    );
    expect(verify.stderr).toBe('');
    expect(verify.code).toBe(0);
    const calendar = await runCommand(
      'systemd-analyze',
      ['calendar', timer.Timer?.OnCalendar ?? ''],
      { timeoutMs: 30_000 },
    );
    expect(calendar.code, calendar.stderr).toBe(0);
  });

  it('start 2 with one more CSV row spends exactly that row; an unchanged start 3 spends 0', async () => {
    const nightly = await nightlyHost();
    const em = nightly.em;
    host = nightly.host;
    const s = service.Service ?? {};
    const [file, ...args] = execArgv(host.substitute(s.ExecStart ?? ''));
    const env = {
      ...cleanEnv({ PATH: `${host.nodeDir}:/usr/bin:/bin` }),
      ...parseEnvFile(readFileSync(host.substitute(s.EnvironmentFile ?? ''), 'utf8')),
    };
    const cwd = host.substitute(s.WorkingDirectory ?? '');
    const out = path.join(cwd, 'jobs/out/product-campaign');
    const start = async () => {
      const result = await runCommand(file as string, args, { cwd, env, timeoutMs: 90_000 });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout + result.stderr).not.toContain(host.apiKey);
      return result.stdout;
    };

    expect(await start()).toMatch(/^items: 9 succeeded, 0 failed/m);
    expect((await ledgerSince(em, 0)).net).toBe(60);
    const files = downloadedFiles(out);

    host.addRow(NEW_ROW);
    const mark2 = await ledgerMark(em);
    expect(await start()).toMatch(/^items: 3 succeeded, 0 failed/m);
    await expectOnlyTheNewRow(em, mark2, out, files);

    // Persistent= catch-up, Restart= or a manual start with nothing new: nothing spent.
    const mark3 = await ledgerMark(em);
    expect(await start()).toMatch(/nothing to do: 12 of 12 item\(s\) are done/);
    expect(await ledgerSince(em, mark3)).toEqual({ charges: [], net: 0 });
    const status = await runCommand(
      process.execPath,
      [BIN, 'status', 'jobs/campaign.yaml', '--json'],
      { cwd, env, timeoutMs: 30_000 },
    );
    const doc = JSON.parse(status.stdout) as { runs: Array<{ runId: string; net: number }> };
    expect(doc.runs.map((run) => run.net)).toEqual([NEW_ROW_CREDITS, 60]);
  }, 150_000);
});
