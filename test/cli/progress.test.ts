/**
 * Live progress, the parts a tmux pane cannot easily stage (progress-tmux.slow.test.ts
 * runs the real thing): the service's Retry-After as a countdown, a terminal
 * that shrinks mid-run, colour only without NO_COLOR, and the ETA arithmetic.
 */
import { describe, expect, it } from 'vitest';
import { progressRenderer } from '../../src/cli/progress.js';
import { formatProgress } from '../../src/cli/progress-format.js';
import type { ProgressSnapshot } from '../../src/scheduler/index.js';
import { fitLine } from '../../src/shared/index.js';
import { capture } from '../helpers/index.js';

const NOW = 1_800_000_000_000;

function snapshot(over: Partial<ProgressSnapshot> = {}): ProgressSnapshot {
  return {
    runId: 'r1',
    steps: [
      { stepId: 'portraits-of-the-whole-team', total: 60, states: { succeeded: 20, submitted: 4 } },
    ],
    spend: { reserved: 8, charged: 40, refunded: 0, net: 40 },
    budget: 500,
    pausedUntil: undefined,
    inFlight: 4,
    ...over,
  } as ProgressSnapshot;
}

function terminal(columns: number, rows = 24) {
  return Object.assign(capture(), { isTTY: true, columns, rows });
}

const texts = (s: ProgressSnapshot, finishedHere = 20) =>
  formatProgress(s, { now: NOW, startedAt: NOW - 40_000, finishedHere, columns: 80 }).map(
    (l) => l.text,
  );

describe('the progress block', () => {
  it('shows the ETA from the items finished in this invocation', () => {
    // 20 items in 40 s, 40 not finished (4 of them in flight): 80 s.
    expect(texts(snapshot())).toContain('  elapsed 40s, ETA 1m20s');
    expect(texts(snapshot(), 0)).toContain('  elapsed 40s, ETA after the first item');
  });

  it("counts down the service's Retry-After, and our own limits otherwise", () => {
    expect(texts(snapshot({ pausedUntil: NOW + 12_500 })).at(-1)).toBe(
      "  waiting for the service's Retry-After (13s)",
    );
    expect(texts(snapshot({ rateWaitUntil: NOW + 3000 })).at(-1)).toBe(
      '  waiting for the rate limit (3s)',
    );
    expect(texts(snapshot()).join('\n')).not.toContain('waiting');
  });

  it('cuts a line to the width with an ellipsis, one column spare', () => {
    expect(fitLine('abcdefghij', 8)).toBe('abcdef…');
    expect(fitLine('abc', 8)).toBe('abc');
  });
});

describe('the renderer', () => {
  it('fits a terminal that shrinks, clearing the rows the wider frame took', () => {
    const tty = terminal(120);
    const renderer = progressRenderer(tty, { now: () => NOW });
    renderer.onEvent({ type: 'run-started', runId: 'r1', resumed: false, items: 60 });
    renderer.onEvent({ type: 'progress', snapshot: snapshot() });
    const first = tty.text();
    const stepLine = first.split('\n')[0] ?? '';
    expect(stepLine.length).toBeGreaterThan(60);
    Object.assign(tty, { columns: 40 });
    tty.emit('resize');
    const second = tty.text().slice(first.length);
    // The 4 lines drawn (the step line took 2+ rows at 40 columns) are cleared first.
    const rows = first
      .split('\n')
      .filter((l) => l !== '')
      .reduce((sum, l) => sum + Math.max(1, Math.ceil(Array.from(l).length / 40)), 0);
    expect(second.startsWith(`\x1b[${rows}A\r\x1b[0J`)).toBe(true);
    for (const line of second.replace(/\x1b\[[0-9;]*[A-Za-z]|\r/g, '').split('\n')) {
      expect(Array.from(line).length).toBeLessThan(40);
    }
    renderer.close();
  });

  it('colours the waiting line only when asked (NO_COLOR unset)', () => {
    const paused = snapshot({ pausedUntil: NOW + 5000 });
    const plain = terminal(80);
    progressRenderer(plain, { now: () => NOW }).onEvent({ type: 'progress', snapshot: paused });
    expect(plain.text()).not.toContain('\x1b[33m');
    const coloured = terminal(80);
    progressRenderer(coloured, { now: () => NOW, color: true }).onEvent({
      type: 'progress',
      snapshot: paused,
    });
    expect(coloured.text()).toContain("\x1b[33m  waiting for the service's Retry-After (5s)");
  });

  it('keeps the block within the screen when there are more steps than rows', () => {
    const tty = terminal(80, 8);
    const steps = Array.from({ length: 12 }, (_, i) => ({
      stepId: `s${i}`,
      total: 1,
      states: {},
    }));
    progressRenderer(tty, { now: () => NOW }).onEvent({
      type: 'progress',
      snapshot: snapshot({ steps } as Partial<ProgressSnapshot>),
    });
    const lines = tty
      .text()
      .split('\n')
      .filter((l) => l !== '');
    expect(lines).toHaveLength(7);
    expect(lines).toContain('  … 8 more steps (see ibatch status)');
  });
});
