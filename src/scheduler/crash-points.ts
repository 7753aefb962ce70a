/**
 * Test-only crash points: named places in the run engine where a chaos or
 * crash test can make the process SIGKILL itself, to prove that a kill at
 * exactly that instant (e.g. between a journal commit and the request it
 * guards) loses nothing and pays nothing twice. See docs/chaos.md.
 *
 * `IBATCH_CRASH_AT` selects them (comma-separated specs):
 * - `after-intent:3`   the 3rd time `after-intent` is reached;
 * - `after-intent@0.2` each time with probability 0.2, drawn from a PRNG
 *   seeded by `IBATCH_CRASH_SEED` (default 1) so a failing run can be replayed;
 * - `*@0.05`           any point with probability 0.05.
 * Unset (normal use), `crashPoint` is one cached check and never fires.
 */
import { IbatchError } from '../shared/errors.js';
import { EXIT } from '../shared/exit-codes.js';
import { mulberry32 } from '../shared/prng.js';

export const CRASH_POINTS = [
  /** The journal committed an attempt's intent; the create is not sent yet. */
  'after-intent',
  /** The create's 202 arrived; it is not committed yet. */
  'after-create-response',
  /** The 202 is committed; polling has not started. */
  'after-submitted',
  /** The outcome (and its outputs) is committed; downloads are not queued yet. */
  'after-outcome',
  /** A training's intent is committed; its create is not sent yet. */
  'training-after-intent',
  /** A training's 202 arrived; it is not committed yet. */
  'training-after-create-response',
] as const;

export type CrashPointName = (typeof CRASH_POINTS)[number];

interface CrashRule {
  readonly point: CrashPointName | '*';
  /** Fire on the nth time the point is reached (1-based). */
  readonly nth?: number;
  /** Fire with this probability each time. */
  readonly probability?: number;
}

/** A malformed IBATCH_CRASH_AT (exit 2: a configuration error). */
export class CrashSpecError extends IbatchError {
  constructor(message: string) {
    super('crash_spec', message, EXIT.invalid);
  }
}

/** Parses `IBATCH_CRASH_AT`; throws CrashSpecError on a malformed spec (a typo must not silently test nothing). */
export function parseCrashSpec(spec: string): CrashRule[] {
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((part) => {
      const match = /^([a-z*-]+)(?::(\d+)|@(0(?:\.\d+)?|1(?:\.0+)?))$/.exec(part);
      const name = match?.[1];
      if (!match || !name || (name !== '*' && !isCrashPoint(name))) {
        throw new CrashSpecError(
          `Expected IBATCH_CRASH_AT entries like \`after-intent:3\` or \`after-intent@0.2\` (points: ${CRASH_POINTS.join(', ')}), got \`${part}\``,
        );
      }
      const point = name as CrashRule['point'];
      if (match[2] !== undefined) {
        const nth = Number(match[2]);
        if (nth < 1) throw new CrashSpecError(`Expected a count >= 1 in \`${part}\``);
        return { point, nth };
      }
      return { point, probability: Number(match[3]) };
    });
}

function isCrashPoint(name: string): name is CrashPointName {
  return (CRASH_POINTS as readonly string[]).includes(name);
}

interface Armed {
  readonly rules: readonly CrashRule[];
  readonly counts: Map<string, number>;
  readonly random: () => number;
}

// undefined = not read yet; null = disabled (the normal case).
let armed: Armed | null | undefined;

function arm(): Armed | null {
  const spec = process.env.IBATCH_CRASH_AT;
  if (!spec) return null;
  const seed = Number(process.env.IBATCH_CRASH_SEED ?? '1');
  return {
    rules: parseCrashSpec(spec),
    counts: new Map(),
    random: mulberry32(Number.isFinite(seed) ? seed : 1),
  };
}

/** SIGKILLs this process when `IBATCH_CRASH_AT` selects `name` now; otherwise returns. */
export function crashPoint(name: CrashPointName): void {
  if (armed === undefined) armed = arm();
  if (armed === null) return;
  const count = (armed.counts.get(name) ?? 0) + 1;
  armed.counts.set(name, count);
  for (const rule of armed.rules) {
    if (rule.point !== name && rule.point !== '*') continue;
    const fire =
      rule.nth !== undefined ? rule.nth === count : armed.random() < (rule.probability ?? 0);
    if (fire) process.kill(process.pid, 'SIGKILL');
  }
}
