/**
 * Limiter accuracy: saturate a local gate of 20 per 600 ms for ~6 s with real
 * timers and check it both reaches the limit and never passes it.
 */
import { SERVICE_RATE_LIMITS } from '../src/contract/index.js';
import { createLocalGate } from '../src/limits/index.js';
import type { Benchmark } from './types.js';

const COUNT = 20;
const WINDOW_MS = 600;
const WINDOWS = 10;

export function maxInWindow(times: readonly number[], windowMs: number): number {
  let best = 0;
  let start = 0;
  for (let end = 0; end < times.length; end += 1) {
    while (times[end]! - times[start]! >= windowMs) start += 1;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

export const limiterAccuracy: Benchmark = async () => {
  const gate = createLocalGate({
    ...SERVICE_RATE_LIMITS,
    generations: { count: COUNT, windowMs: WINDOW_MS },
  });
  const times: number[] = [];
  // The gate's own grant stamps: what it decided, not when this process next got the CPU.
  gate.on('grant', (event) => times.push(event.at));
  try {
    await Promise.all(
      Array.from({ length: COUNT * (WINDOWS + 1) }, () => gate.acquire(['generations'])),
    );
  } finally {
    gate.close();
  }
  times.sort((a, b) => a - b);
  // Steady-state rate: everything after the first burst over the time it took.
  const rate = (times.length - COUNT) / (times.at(-1)! - times[0]!);
  const fraction = rate / (COUNT / WINDOW_MS);
  const worst = maxInWindow(times, WINDOW_MS);
  const note = `${COUNT}/${WINDOW_MS}ms, ${times.length} grants, default margin max(25ms, 1%)`;
  return [
    {
      group: 'limits',
      metric: 'achieved fraction of the limit (saturated)',
      value: fraction,
      unit: 'ratio',
      target: '>= 0.95',
      pass: fraction >= 0.95,
      note,
    },
    {
      group: 'limits',
      metric: 'max grants in any sliding window',
      value: worst,
      unit: 'grants',
      target: `<= ${COUNT}`,
      pass: worst <= COUNT,
      note,
    },
  ];
};
