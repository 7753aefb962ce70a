/**
 * What a run id may be: it names the run in the journal, in
 * every idempotency key and in messages, so it must be visible, one line and
 * short. The one rule for `--run-id` and `runJob({ runId })`.
 */
import { UsageError } from '../shared/index.js';

export const MAX_RUN_ID_LENGTH = 100;

/** How the rule reads in a message: "Expected `--run-id` to be <RUN_ID_RULE>". */
export const RUN_ID_RULE = `non-empty printable text of at most ${MAX_RUN_ID_LENGTH} characters`;

// Control, format (bidi, zero-width), line/paragraph separators and unassigned code points.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cn}]/u;

/** Whether `id` is a usable run id. */
export function isValidRunId(id: string): boolean {
  return id.trim() !== '' && [...id].length <= MAX_RUN_ID_LENGTH && !UNPRINTABLE.test(id);
}

/**
 * Throws {@link UsageError} (exit 2, one line) when `id` is not a usable run
 * id; `name` is what the user wrote it as (`--run-id`, `runId`).
 */
export function assertRunId(id: string, name = 'runId'): void {
  if (!isValidRunId(id)) {
    throw new UsageError(`Expected \`${name}\` to be ${RUN_ID_RULE}, got ${describeValue(id)}`);
  }
}

/** A bad value as a short, one-line quote (a 5,000-character id is not echoed whole). */
function describeValue(value: string): string {
  const quoted = JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return value.length > 40 ? `${quoted} (${value.length} characters)` : quoted;
}
