/**
 * The live progress on a real terminal. `ibatch run` of a
 * 60-item job on the in-process emulator, inside a tmux pane of 80x24 and of
 * 120x40, with limits tight enough that the run idles between windows. The
 * pane is captured again and again while it runs; each capture must hold
 * exactly one progress block (no stale lines or fragments of older frames),
 * none of its lines wider than the pane, the done count the journal had
 * within one redraw interval of the capture, elapsed time and an ETA; and
 * some capture must show the run waiting for the rate limit. A 60-row CSV
 * run with labels far wider than the pane, at 80 columns: every line of every
 * capture one row of its own (log lines cut, never wrapped), `finished:`
 * once, a row's escape sequences shown escaped and not obeyed. Off a
 * terminal the output stays one JSON log line per event. Needs `npm run
 * build` and tmux (CI installs it: .ci/run); without tmux they show as
 * skipped.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import { BIN, cleanEnv, defer, spawnCli, until } from '../helpers/index.js';
import { imageJob, type Workspace, workspace } from '../scheduler/helpers.js';
import { csvJob, writeRows } from './csv-job.js';

const ITEMS = 60;
/** Ten creates per 3 s (requests at the emulator's scale): six windows, idle for most of each. */
const LIMITS = 'requests=120/3s,generations=10/3s';
/** The scheduler's tick: a count may lag the journal by what ended within it. */
const REDRAW_MS = 1000;

const hasTmux = spawnSync('tmux', ['-V']).status === 0;

function tmux(socket: string, args: readonly string[]): string {
  return execFileSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], {
    encoding: 'utf8',
    env: cleanEnv(),
  });
}

interface Capture {
  readonly lines: string[];
  /** Items the journal had succeeded one redraw before the capture. */
  readonly doneBefore: number;
  /** Succeeded items in the journal right after the capture. */
  readonly doneAfter: number;
}

const BLOCK = {
  step: /^ {2}shots \[[#.]+\] (\d+)\/60 done, \d+ in flight, \d+ failed, \d+ queued$/,
  credits: /^ {2}credits: \d+ spent, \d+ reserved no budget$/,
  time: /^ {2}elapsed (\d+m)?\d+s, ETA (after the first item|(\d+m)?\d+s)$/,
  wait: /^ {2}waiting for the rate limit \(\d+s\)$/,
};

async function succeeded(journalPath: string, before?: number): Promise<number | undefined> {
  const journal = await openJournal(journalPath, { readonly: true }).catch(() => undefined);
  if (!journal) return undefined;
  try {
    const run = journal.listRuns()[0];
    if (!run) return undefined;
    // An item's row is last written as it succeeds (its success is not a timeline event).
    const succeeded = journal.listItems(run.runId).filter((i) => i.state === 'succeeded');
    return before === undefined
      ? succeeded.length
      : succeeded.filter((i) => i.updatedAt <= before).length;
  } finally {
    journal.close();
  }
}

/** `ibatch run` of `ws`'s job on the emulator in a fresh tmux pane; the pane's socket. */
function runInPane(ws: Workspace, width: number, height: number, limits: string): string {
  const socket = `ibatch-progress-${process.pid}-${width}-${path.basename(ws.dir)}`;
  const command = [
    process.execPath,
    BIN,
    'run',
    ws.jobPath,
    '--emulator',
    '--time-scale',
    '20',
    '--limits',
    limits,
  ]
    .map((arg) => `'${arg}'`)
    .join(' ');
  // The pane stays after the run ends, so its last frame can be read.
  tmux(socket, [
    'new-session',
    '-d',
    '-x',
    String(width),
    '-y',
    String(height),
    '-c',
    ws.dir,
    `${command}; echo "EXIT=$?"; sleep 600`,
  ]);
  defer(() => tmux(socket, ['kill-server']));
  return socket;
}

/** The pane's lines (a wrapped line joined back into one: `-J`), its history too with `all`. */
function capturePane(socket: string, all = false): string[] {
  const history = all ? ['-S', '-'] : [];
  return tmux(socket, ['capture-pane', '-p', '-J', ...history, '-t', '0'])
    .split('\n')
    .map((line) => line.trimEnd());
}

async function watchRun(width: number, height: number): Promise<Capture[]> {
  const ws = workspace(imageJob({ name: `tmux-${width}`, n: ITEMS }));
  const socket = runInPane(ws, width, height, LIMITS);
  const captures: Capture[] = [];
  let finished = false;
  await until(
    async () => {
      const before = Date.now() - REDRAW_MS;
      const doneBefore = (await succeeded(ws.journalPath, before)) ?? 0;
      const lines = capturePane(socket);
      const doneAfter = (await succeeded(ws.journalPath)) ?? 0;
      if (lines.some((line) => BLOCK.step.test(line))) {
        captures.push({ lines, doneBefore, doneAfter });
      }
      finished = lines.some((line) => line.startsWith('EXIT='));
      return finished;
    },
    { timeoutMs: 120_000, everyMs: 400, what: 'the run to end in the tmux pane' },
  );
  expect(captures.at(-1)?.lines).toContain('EXIT=0');
  expect(await succeeded(ws.journalPath)).toBe(ITEMS);
  return captures;
}

function checkCapture(capture: Capture, width: number): void {
  const { lines } = capture;
  const shown = lines.join('\n');
  const block = lines.filter((line) => Object.values(BLOCK).some((re) => re.test(line)));
  // One block: one line of each kind, at most one waiting line...
  expect(
    lines.filter((l) => BLOCK.step.test(l)),
    shown,
  ).toHaveLength(1);
  expect(
    lines.filter((l) => BLOCK.credits.test(l)),
    shown,
  ).toHaveLength(1);
  expect(
    lines.filter((l) => BLOCK.time.test(l)),
    shown,
  ).toHaveLength(1);
  expect(lines.filter((l) => BLOCK.wait.test(l)).length, shown).toBeLessThanOrEqual(1);
  // ...and no fragment of an older frame anywhere else (a wrapped or half-cleared line).
  const fragments = lines.filter(
    (l) => /in flight|queued|reserved|ETA|waiting for/.test(l) && !block.includes(l),
  );
  expect(fragments, shown).toEqual([]);
  for (const line of block) expect(Array.from(line).length, line).toBeLessThan(width);
  const done = Number(lines.find((l) => BLOCK.step.test(l))?.match(BLOCK.step)?.[1]);
  expect(done, shown).toBeGreaterThanOrEqual(capture.doneBefore);
  expect(done, shown).toBeLessThanOrEqual(capture.doneAfter);
}

// Without tmux these show as skipped (never as passing): CI installs it (.ci/run).
describe.skipIf(!hasTmux)('progress on a terminal (tmux)', () => {
  it.each([
    [80, 24],
    [120, 40],
  ])(
    'at %ix%i: one block that fits, counts of the journal, time and waits',
    async (width, height) => {
      const captures = await watchRun(width, height);
      // Several looks while it ran, not only the last frame.
      expect(captures.length).toBeGreaterThanOrEqual(5);
      for (const capture of captures) checkCapture(capture, width);
      expect(captures.some((c) => c.lines.some((l) => BLOCK.wait.test(l)))).toBe(true);
      expect(captures.some((c) => c.lines.some((l) => /ETA (\d+m)?\d+s$/.test(l)))).toBe(true);
      expect(captures.at(-1)?.lines.some((l) => l.includes(`${ITEMS}/${ITEMS} done`))).toBe(true);
    },
    180_000,
  );
});

/** A value with the escape sequences of a hostile spreadsheet: retitle the window, clear the screen. */
const HOSTILE = 'evil \x1b]0;pwned\x07\x1b[2J mug';
/** How it must show: escaped, inert. */
const HOSTILE_SHOWN = 'evil \\x1b]0;pwned\\x07\\x1b[2J mug';

/** 60 CSV rows with long values (labels far wider than 80 columns), one of them hostile. */
function longRows(): Array<[string, string]> {
  return Array.from({ length: ITEMS }, (_, i) => [
    i === 7
      ? HOSTILE
      : `an extraordinarily long product description number ${i} with many words in it`,
    `a sunny kitchen table with plants and a window and variant ${i}`,
  ]);
}

/** What a line of the pane may be: a log line, the block, the run's summary, the shell's end. */
const KNOWN_LINE = [
  /^\d\d:\d\d:\d\d (info|warn|error) /,
  ...Object.values(BLOCK),
  /^ibatch: using the in-process emulator at /,
  /^finished: /,
  /^run \S+$/,
  /^items: /,
  /^credits: /,
  /^outputs: /,
  /^EXIT=\d+$/,
];

describe.skipIf(!hasTmux)('a CSV run on an 80-column terminal (tmux)', () => {
  it('shows one row per log line (labels cut with …), finished: once, escape sequences escaped', async () => {
    const width = 80;
    const ws = workspace(csvJob('tmux-csv'));
    writeRows(ws, longRows());
    const socket = runInPane(ws, width, 24, 'requests=120/3s,generations=20/3s');
    const looks: string[][] = [];
    await until(
      () => {
        const lines = capturePane(socket);
        looks.push(lines);
        return lines.some((line) => line.startsWith('EXIT='));
      },
      { timeoutMs: 120_000, everyMs: 300, what: 'the run to end in the tmux pane' },
    );
    const history = capturePane(socket, true);
    const shown = history.join('\n');
    expect(history, shown).toContain('EXIT=0');
    // Several looks while it ran, each (and the whole history) without a wrapped
    // line: joined back by -J, a wrap would be one line wider than the pane, and
    // a continuation row would be none of the known shapes.
    expect(looks.length).toBeGreaterThanOrEqual(5);
    for (const lines of [...looks, history]) {
      for (const line of lines.filter((l) => l !== '')) {
        expect(Array.from(line).length, line).toBeLessThanOrEqual(width);
        expect(
          KNOWN_LINE.some((re) => re.test(line)),
          `not a line of its own: ${line}`,
        ).toBe(true);
      }
    }
    const itemLines = history.filter((l) => / info {2}shots\/.* succeeded$/.test(l));
    expect(itemLines, shown).toHaveLength(ITEMS);
    expect(itemLines.filter((l) => l.includes('…')).length).toBeGreaterThan(0);
    expect(
      history.filter((l) => l.includes('finished:')),
      shown,
    ).toEqual([`finished: ${ITEMS} item(s) succeeded`]);
    expect(shown).toContain(HOSTILE_SHOWN);
    // Nothing the row said was obeyed: the pane's title is not the row's.
    expect(tmux(socket, ['display', '-p', '-t', '0', '#{pane_title}'])).not.toContain('pwned');
  }, 180_000);
});

describe('progress off a terminal', () => {
  it('stays one JSON log line per event, with no terminal codes', async () => {
    const ws = workspace(imageJob({ name: 'piped', n: 6 }));
    const run = spawnCli(['run', ws.jobPath, '--emulator', '--time-scale', '20'], {
      cwd: ws.dir,
      env: cleanEnv(),
    });
    const exit = await run.exited;
    expect(exit.code, exit.stderr).toBe(0);
    expect(exit.stderr).not.toContain('\x1b');
    const lines = exit.stderr.split('\n').filter((line) => line !== '');
    const logs = lines.filter((line) => !line.startsWith('ibatch: using the in-process emulator'));
    const parsed = logs.map((line) => JSON.parse(line) as { event?: string });
    expect(parsed.filter((log) => log.event === 'item.succeeded')).toHaveLength(6);
  }, 60_000);
});
