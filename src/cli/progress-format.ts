/**
 * The words and layout of the live progress block (progress.ts draws it):
 * one line per step, credits, elapsed time and ETA, and what the run waits
 * for while it idles. Pure: the same snapshot and clock give the same lines.
 */
import {
  FAILED_ITEM_STATES,
  IN_FLIGHT_ITEM_STATES,
  ITEM_STATE,
  isStateIn,
  TERMINAL_ITEM_STATES,
} from '../journal/index.js';
import type { ProgressSnapshot } from '../scheduler/index.js';
import { printable } from '../shared/index.js';

export interface ProgressTiming {
  readonly now: number;
  /** When this invocation's run started (epoch ms). */
  readonly startedAt: number;
  /** Items that ended in this invocation: the rate the ETA is made of. */
  readonly finishedHere: number;
  /** The terminal's width: narrower ones get a shorter bar. */
  readonly columns: number;
}

/** A line of the block; `wait` lines are highlighted when colour is on. */
export interface ProgressLine {
  readonly text: string;
  readonly kind: 'step' | 'total' | 'wait';
}

/** A step's items by how far they got, from its count per item state. */
export interface StepCounts {
  readonly total: number;
  readonly done: number;
  readonly inFlight: number;
  readonly failed: number;
  readonly queued: number;
  /** Items that will still change in this run (not terminal). */
  readonly open: number;
}

export function stepCounts(
  total: number,
  states: Readonly<Record<string, number | undefined>>,
): StepCounts {
  const count = (pred: (state: string) => boolean) =>
    Object.entries(states).reduce((sum, [state, n]) => sum + (pred(state) ? (n ?? 0) : 0), 0);
  const done = count((st) => st === ITEM_STATE.succeeded);
  const inFlight = count((st) => isStateIn(IN_FLIGHT_ITEM_STATES, st));
  const failed = count((st) => isStateIn(FAILED_ITEM_STATES, st));
  const open = total - count((st) => isStateIn(TERMINAL_ITEM_STATES, st));
  return { total, done, inFlight, failed, queued: total - done - inFlight - failed, open };
}

/** "3/10 done, 2 in flight, 0 failed, 5 queued": the live block and `status` say it alike. */
export function countsText(c: Omit<StepCounts, 'open'>): string {
  return `${c.done}/${c.total} done, ${c.inFlight} in flight, ${c.failed} failed, ${c.queued} queued`;
}

export function formatProgress(s: ProgressSnapshot, timing: ProgressTiming): ProgressLine[] {
  const idWidth = Math.min(16, Math.max(0, ...s.steps.map((step) => step.stepId.length)));
  const barWidth = timing.columns >= 100 ? 20 : 10;
  let remaining = 0;
  const lines: ProgressLine[] = s.steps.map((step) => {
    const { done, inFlight, failed, queued, open } = stepCounts(step.total, step.states);
    remaining += open;
    const filled = Math.round((done / Math.max(1, step.total)) * barWidth);
    const bar = `${'#'.repeat(filled)}${'.'.repeat(barWidth - filled)}`;
    return {
      kind: 'step',
      text: `  ${printable(step.stepId).padEnd(idWidth)} [${bar}] ${countsText({ done, total: step.total, inFlight, failed, queued })}`,
    };
  });
  const budget = s.budget === null ? 'no budget' : `of ${s.budget} budget`;
  const credits = `  credits: ${s.spend.net} spent, ${s.spend.reserved} reserved ${budget}`;
  lines.push({ kind: 'total', text: credits });
  lines.push({ kind: 'total', text: `  ${timeLine(timing, remaining)}` });
  const wait = waitLine(s, timing.now);
  if (wait) lines.push({ kind: 'wait', text: `  ${wait}` });
  return lines;
}

/** `elapsed 42s, ETA 1m05s`: the ETA from this invocation's completed-item rate. */
function timeLine(timing: ProgressTiming, remaining: number): string {
  const elapsed = Math.max(0, timing.now - timing.startedAt);
  const head = `elapsed ${formatWait(elapsed)}`;
  if (remaining === 0) return `${head}, ETA 0s`;
  if (timing.finishedHere === 0) return `${head}, ETA after the first item`;
  return `${head}, ETA ${formatWait((elapsed / timing.finishedHere) * remaining)}`;
}

/** What an idle run waits for: the service's Retry-After wins over our own limits. */
function waitLine(s: ProgressSnapshot, now: number): string | undefined {
  if (s.pausedUntil !== undefined && s.pausedUntil > now) {
    return `waiting for the service's Retry-After (${formatWait(s.pausedUntil - now)})`;
  }
  if (s.rateWaitUntil !== undefined && s.rateWaitUntil > now) {
    return `waiting for the rate limit (${formatWait(s.rateWaitUntil - now)})`;
  }
  return undefined;
}

export function formatWait(ms: number): string {
  const total = Math.ceil(ms / 1000);
  const m = Math.floor(total / 60);
  const sec = total % 60;
  return m > 0 ? `${m}m${String(sec).padStart(2, '0')}s` : `${sec}s`;
}
