/**
 * Live progress for people on a TTY: one line per step (done / in flight /
 * failed / queued), credits spent of the budget, the account-wide pause as a
 * countdown. Redrawn in place; nothing is drawn when stderr is not a TTY
 * (JSON logs carry the same facts there).
 */
import type { ProgressSnapshot, RunEvent } from '../scheduler/index.js';

const IN_FLIGHT = new Set(['submitting', 'submitted']);
const FAILED = new Set(['failed', 'blocked', 'skipped']);

export function formatProgress(s: ProgressSnapshot, now = Date.now()): string[] {
  const lines = s.steps.map((step) => {
    const count = (pred: (state: string) => boolean) =>
      Object.entries(step.states).reduce(
        (sum, [state, n]) => sum + (pred(state) ? (n ?? 0) : 0),
        0,
      );
    const done = count((st) => st === 'succeeded');
    const flying = count((st) => IN_FLIGHT.has(st));
    const failed = count((st) => FAILED.has(st));
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

/** Returns an event handler that redraws the progress block on `stream`. */
export function progressRenderer(stream: NodeJS.WritableStream & { isTTY?: boolean }) {
  let drawn = 0;
  return {
    onEvent(event: RunEvent): void {
      if (!stream.isTTY) return;
      if (event.type === 'progress') {
        const lines = formatProgress(event.snapshot);
        const up = drawn > 0 ? `\x1b[${drawn}A` : '';
        stream.write(`${up}${lines.map((l) => `\x1b[2K${l}`).join('\n')}\n`);
        drawn = lines.length;
      } else if (event.type === 'item-done' && event.state !== 'succeeded') {
        drawn = 0; // a log line moves the block down: draw it afresh
      }
    },
  };
}
