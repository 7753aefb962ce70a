/**
 * Live progress for people on a TTY (the lines: progress-format.ts). Redrawn
 * in place: every line drawn is cleared on the next frame, each line is cut
 * to the terminal's width (re-read at every frame and on resize), and the
 * block never outgrows the screen, so nothing stale is ever left behind.
 * Counts come from the scheduler's snapshots, taken at every item's end as
 * well as each second, so they match the journal whenever someone looks.
 * Nothing is drawn when stderr is not a TTY: JSON log lines carry the facts.
 */
import { Writable } from 'node:stream';
import type { RunEvent } from '../scheduler/index.js';
import { fitLine } from '../shared/index.js';
import { formatProgress, type ProgressLine } from './progress-format.js';

export interface ProgressStream extends NodeJS.WritableStream {
  readonly isTTY?: boolean;
  /** The terminal's size when it is one (read at every frame). */
  readonly columns?: number;
  readonly rows?: number;
}

export interface ProgressOptions {
  /** Highlight the waiting line (a TTY without NO_COLOR). */
  readonly color?: boolean;
  readonly now?: () => number;
}

const YELLOW = '\x1b[33m';
const RESET_COLOR = '\x1b[39m';

/**
 * Owns the terminal while a run shows progress: log lines written through
 * `logStream` clear the progress block first and redraw it after, so the two
 * never garble each other. Off a TTY it draws nothing and passes logs through.
 */
export function progressRenderer(stream: ProgressStream, options: ProgressOptions = {}) {
  const now = options.now ?? Date.now;
  let startedAt: number | undefined;
  let finishedHere = 0;
  let last: Extract<RunEvent, { type: 'progress' }>['snapshot'] | undefined;
  // Lengths (characters) of the lines on screen: how many rows to clear.
  let drawn: number[] = [];
  const columns = () => Math.max(20, stream.columns ?? 80);

  /** Moves to the block's first row and clears to the end of the screen. */
  const clearCode = (): string => {
    if (drawn.length === 0) return '';
    // A line drawn wider than the terminal is now (it shrank) takes more rows.
    const rows = drawn.reduce((sum, n) => sum + Math.max(1, Math.ceil(n / columns())), 0);
    drawn = [];
    return `\x1b[${rows}A\r\x1b[0J`;
  };
  const frame = (): string => {
    if (!last) return '';
    const time = now();
    const width = columns();
    const lines = capToScreen(
      formatProgress(last, {
        now: time,
        startedAt: startedAt ?? time,
        finishedHere,
        columns: width,
      }),
      stream.rows,
    );
    const texts = lines.map((line) => fitLine(line.text, width));
    drawn = texts.map((text) => Array.from(text).length);
    return texts
      .map((text, i) =>
        options.color && lines[i]?.kind === 'wait'
          ? `${YELLOW}${text}${RESET_COLOR}\n`
          : `${text}\n`,
      )
      .join('');
  };
  // One write per frame: a terminal never shows half a redraw.
  const redraw = () => stream.write(clearCode() + frame());

  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (!stream.isTTY) {
        stream.write(chunk);
        done();
        return;
      }
      stream.write(clearCode() + chunk.toString('utf8') + frame());
      done();
    },
  });
  if (stream.isTTY && 'on' in stream) stream.on('resize', redraw);
  return {
    /** Give this to the logger instead of the terminal stream (its width read live). */
    logStream: Object.defineProperty(Object.assign(logStream, { isTTY: stream.isTTY }), 'columns', {
      get: () => stream.columns,
    }) as Writable & { readonly isTTY?: boolean; readonly columns?: number },
    onEvent(event: RunEvent): void {
      if (!stream.isTTY) return;
      if (event.type === 'run-started') startedAt = now();
      if (event.type === 'item-done') finishedHere++;
      if (event.type !== 'progress') return;
      startedAt ??= now();
      last = event.snapshot;
      redraw();
    },
    /** Stops following the terminal's size (the block stays on screen). */
    close(): void {
      if ('off' in stream) stream.off('resize', redraw);
    },
  };
}

/** At most `rows - 1` lines: the first steps, a count of the rest, then the totals. */
function capToScreen(lines: ProgressLine[], rows: number | undefined): ProgressLine[] {
  const room = Math.max(4, (rows ?? Number.POSITIVE_INFINITY) - 1);
  if (lines.length <= room) return lines;
  const steps = lines.filter((line) => line.kind === 'step');
  const totals = lines.filter((line) => line.kind !== 'step');
  const shown = Math.max(0, room - totals.length - 1);
  const more: ProgressLine = {
    kind: 'step',
    text: `  … ${steps.length - shown} more steps (see ibatch status)`,
  };
  return [...steps.slice(0, shown), more, ...totals];
}
