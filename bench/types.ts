/** One row of the benchmark table (bench/results.md). */
export interface BenchRow {
  /** Benchmark group, e.g. "emulator", "client", "job", "run". */
  readonly group: string;
  /** What was measured, e.g. "requests/s through the client". */
  readonly metric: string;
  /** The measured value (this machine's absolute figure or a ratio). */
  readonly value: number;
  readonly unit: string;
  /** The target the figure must meet, as text (e.g. ">= 0.8"), when there is one. */
  readonly target?: string;
  /** Whether the value meets the target; undefined when there is no target. */
  readonly pass?: boolean;
  readonly note?: string;
}

/** A benchmark: runs, measures side by side where it compares, returns rows. */
export type Benchmark = () => Promise<BenchRow[]>;
