/**
 * What `scaleRun` measures, from the environment:
 *   IBATCH_BENCH_SCALE=quick|medium|full   sizes (default full: 1k beside 100k)
 *   IBATCH_BENCH_SCALE_SMALL / _LARGE      override the two sizes
 *   IBATCH_BENCH_SCALE_TIME_SCALE          emulator time scale (default 600)
 *   IBATCH_BENCH_SCALE_RESUME_CAP_S        longest life of the resumed run (default 300)
 *   IBATCH_BENCH_SCALE_SQLITE=0            skip the SQLite journal's side (with _POSTGRES: that side alone)
 *   IBATCH_BENCH_SCALE_POSTGRES            the same rows with a PostgreSQL
 *     journal too: `1` at the same sizes, a number for its large size
 * (the server those rows run against: bench/postgres.ts).
 */

export interface ScalePreset {
  readonly name: string;
  readonly small: number;
  readonly large: number;
  readonly timeScale: number;
  /** The resumed run is killed after this long if it has not ended, ms. */
  readonly resumeCapMs: number;
  /** Whether the SQLite journal's side runs (re-measuring one store alone). */
  readonly sqlite: boolean;
  /** The PostgreSQL side's sizes; `postgresLarge` undefined: no PostgreSQL rows. */
  readonly postgresSmall: number;
  readonly postgresLarge: number | undefined;
}

/**
 * The targets (docs/benchmarks.md) are for 1,000 beside 100,000 (`full`); `medium` is the
 * earlier 20,000-item stand-in, `quick` a look in a few minutes.
 */
const PRESETS: Record<string, { readonly small: number; readonly large: number }> = {
  quick: { small: 1000, large: 5000 },
  medium: { small: 1000, large: 20_000 },
  full: { small: 1000, large: 100_000 },
};

/**
 * 20 generations per 100 ms, 200 creates a second: more than a run's CPU
 * allows at a few ms per item, so the CLI's own work, not the limit, sets the
 * pace of the large run.
 */
const DEFAULT_TIME_SCALE = 600;

/**
 * A quarter of a 100,000-item run at the pace the targets imply (about
 * 150 items a second) takes about 3 minutes: the cap leaves room for that
 * and keeps the bench inside its time when a resumed run is far slower.
 */
const DEFAULT_RESUME_CAP_S = 300;

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${name} must be a positive integer, got ${raw}`);
  return n;
}

export function scalePreset(env: NodeJS.ProcessEnv): ScalePreset {
  const name = env.IBATCH_BENCH_SCALE || 'full';
  const base = PRESETS[name];
  if (!base) {
    throw new Error(
      `IBATCH_BENCH_SCALE must be one of ${Object.keys(PRESETS).join(', ')}, got ${name}`,
    );
  }
  const small = positiveInt(env, 'IBATCH_BENCH_SCALE_SMALL', base.small);
  const large = positiveInt(env, 'IBATCH_BENCH_SCALE_LARGE', base.large);
  const pg = env.IBATCH_BENCH_SCALE_POSTGRES;
  const postgresLarge =
    pg === undefined || pg === '' || pg === '0'
      ? undefined
      : pg === '1'
        ? large
        : positiveInt(env, 'IBATCH_BENCH_SCALE_POSTGRES', large);
  return {
    name,
    small,
    large,
    timeScale: positiveInt(env, 'IBATCH_BENCH_SCALE_TIME_SCALE', DEFAULT_TIME_SCALE),
    resumeCapMs: positiveInt(env, 'IBATCH_BENCH_SCALE_RESUME_CAP_S', DEFAULT_RESUME_CAP_S) * 1000,
    sqlite: env.IBATCH_BENCH_SCALE_SQLITE !== '0',
    postgresSmall: Math.min(small, postgresLarge ?? small),
    postgresLarge,
  };
}
