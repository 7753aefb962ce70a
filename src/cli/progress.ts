/**
 * Live progress for people on a TTY: one line per step (done / in flight /
 * failed / queued), credits spent of the budget, the account-wide pause as a
 * countdown. Redrawn in place; nothing is drawn when stderr is not a TTY
 * (JSON logs carry the same facts there).
 */
import { Writable } from 'node:stream';
import {
  FAILED_ITEM_STATES,
  IN_FLIGHT_ITEM_STATES,
  ITEM_STATE,
  isStateIn,
} from '../journal/index.js';
import type { ProgressSnapshot, RunEvent } from '../scheduler/index.js';

export function formatProgress(s: ProgressSnapshot, now = Date.now()): string[] {
  const lines = s.steps.map((step) => {
    const count = (pred: (state: string) => boolean) =>
      Object.entries(step.states).reduce(
        (sum, [state, n]) => sum + (pred(state) ? (n ?? 0) : 0),
        0,
      );
    const done = count((st) => st === ITEM_STATE.succeeded);
    const flying = count((st) => isStateIn(IN_FLIGHT_ITEM_STATES, st));
    const failed = count((st) => isStateIn(FAILED_ITEM_STATES, st));
    const queued = step.total - done - flying - failed;
    const width = 20;
    const filled = Math.round((done / Math.max(1, step.total)) * width);
    const bar = `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
    return `  ${step.stepId.padEnd(16)} [${bar}] ${done}/${step.total} done, ${flying} in flight, ${failed} failed, ${queued} queued`;
  });
  const budget = s.budget === null ? 'no budget' : `of ${s.budget} budget`;
  let footer = `  credits: ${s.spend.net} spent, ${s.spend.reserved} reserved ${budget}`;
  if (s.pausedUntil && s.pausedUntil > now) {
    footer += `  | rate limited: resuming in ${formatWait(s.pausedUntil - now)}`;
  }
  return [...lines, footer];
}

export function formatWait(ms: number): string {
  const total = Math.ceil(ms / 1000);
  const m = Math.floor(total / 60);
  const sec = total % 60;
  return m > 0 ? `${m}m${String(sec).padStart(2, '0')}s` : `${sec}s`;
}

/**
 * Owns the terminal while a run shows progress: log lines written through
 * `logStream` clear the progress block first and redraw it after, so the two
 * never garble each other. Off a TTY it draws nothing and passes logs through.
 */
export function progressRenderer(stream: NodeJS.WritableStream & { isTTY?: boolean }) {
  let block: string[] = [];
  const clear = () => {
    if (block.length > 0) stream.write(`\x1b[${block.length}A\x1b[0J`);
  };
  const draw = () => {
    if (block.length > 0) stream.write(`${block.join('\n')}\n`);
  };
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (!stream.isTTY) {
        stream.write(chunk);
        done();
        return;
      }
      clear();
      stream.write(chunk);
      draw();
      done();
    },
  });
  return {
    /** Give this to the logger instead of the terminal stream. */
    logStream: Object.assign(logStream, { isTTY: stream.isTTY }),
    onEvent(event: RunEvent): void {
      if (!stream.isTTY || event.type !== 'progress') return;
      clear();
      block = formatProgress(event.snapshot);
      draw();
    },
  };
}
