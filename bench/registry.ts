/** Every benchmark, by name (`npm run bench -- NAME` runs one). Add yours with one line. */
import type { Benchmark } from './types.js';

export const BENCHMARKS: Record<string, Benchmark> = {};
