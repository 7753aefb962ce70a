/**
 * Fails a test file that leaves a handle open: a server, socket, timer, child
 * process or Redis connection that outlives the file keeps the worker busy
 * and leaks into the next file's timings. The baseline is what is open when
 * the file starts (the worker's own IPC, vitest's timers); after the file's
 * own afterAll hooks (they run first: hooks unwind as a stack) we poll until
 * nothing beyond it is open, so closes already under way may finish.
 */
import { afterAll, beforeAll } from 'vitest';
import { describeHandle, openHandles, resourceCounts } from './handles.js';
import { type TimerTracker, trackTimers } from './timers.js';

/** How long closes in progress may take before what is still open counts as leaked. */
const GRACE_MS = 2000;

let baseline = new Map<string, number>();
let baselineHandles = new Set<unknown>();
let timers: TimerTracker | undefined;

beforeAll(() => {
  baseline = resourceCounts();
  baselineHandles = new Set(openHandles());
  timers = trackTimers();
});

afterAll(async () => {
  const tracker = timers;
  timers = undefined;
  tracker?.stop();
  const leaked = () => [...excess(resourceCounts(), baseline), ...(tracker?.live() ?? [])];
  const deadline = Date.now() + GRACE_MS;
  let extra = leaked();
  while (extra.length > 0 && Date.now() < deadline) {
    // A macrotask turn: lets close callbacks and socket teardown run.
    await new Promise((resolve) => setTimeout(resolve, 10));
    extra = leaked();
  }
  if (extra.length === 0) return;
  const handles = openHandles()
    .filter((handle) => !baselineHandles.has(handle))
    .map(describeHandle);
  throw new Error(
    `this test file leaked open handles (still open ${GRACE_MS} ms after its last test): ` +
      `${extra.join(', ')}${handles.length ? `\n  ${handles.join('\n  ')}` : ''}`,
  );
}, GRACE_MS + 5000);

/** Resource types open now beyond the baseline, as `Type xN`. */
function excess(now: Map<string, number>, before: Map<string, number>): string[] {
  const out: string[] = [];
  for (const [type, count] of now) {
    const more = count - (before.get(type) ?? 0);
    if (more > 0) out.push(`${type} x${more}`);
  }
  return out;
}
