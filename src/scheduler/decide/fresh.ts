/** `--fresh [STEP...]`: which steps a run makes again on purpose. */
import { UsageError } from '../../shared/index.js';

/** `--fresh` names steps of the job (a typo must not silently regenerate nothing). */
export function assertFreshSteps(
  fresh: true | readonly string[] | undefined,
  steps: readonly { readonly id: string }[],
): void {
  if (fresh === undefined || fresh === true) return;
  const known = new Set(steps.map((s) => s.id));
  const unknown = fresh.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new UsageError(
      `--fresh names ${unknown.map((id) => `"${id}"`).join(', ')}, not a step of the job; its steps: ${[...known].join(', ')}`,
    );
  }
}

/** `--fresh` as the decision takes it: `true` for every step. */
export function freshSteps(fresh: true | readonly string[]): ReadonlySet<string> | true {
  return fresh === true || fresh.length === 0 ? true : new Set(fresh);
}
