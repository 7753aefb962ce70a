/**
 * Identifiers the journal and the engine share: idempotency keys and run ids
 * (request hashes are `contentHash` of src/shared). All deterministic except
 * `newRunId`.
 */
import { randomBytes } from 'node:crypto';
import { LIMITS } from '../contract/index.js';
import { sha256Hex } from '../shared/index.js';

export interface IdempotencyKeyParts {
  readonly jobName: string;
  readonly runId: string;
  readonly stepId: string;
  readonly itemKey: string;
  /** 1-based attempt number: a retry after a refund is a new attempt. */
  readonly attempt: number;
}

const KEY_VERSION = 'ib1';

/** Lowercase `[a-z0-9._-]` only, runs of anything else collapsed to `-`, capped. */
function slug(text: string, max: number): string {
  const cleaned = text
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return cleaned.slice(0, max) || 'x';
}

/**
 * The `Idempotency-Key` of one attempt: a readable prefix (job, run, step,
 * item, attempt) for people reading service logs, then 32 hex chars of the
 * sha256 of the exact parts so two different attempts never share a key even
 * when their slugs collide or are truncated. Always <= 200 characters of
 * `[a-z0-9._-]`, and the same on any machine for the same parts (so
 * `--run-id` makes a retried CI job deduplicate without the journal).
 *
 * @example idempotencyKey({ jobName: 'spring', runId: 'r1', stepId: 'portraits', itemKey: 'beach', attempt: 1 })
 * // 'ib1-spring-r1-portraits-beach-a1-<32 hex>'
 */
export function idempotencyKey(parts: IdempotencyKeyParts): string {
  if (!Number.isInteger(parts.attempt) || parts.attempt < 1) {
    throw new RangeError(`Expected \`attempt\` to be an integer >= 1, got ${parts.attempt}`);
  }
  const digest = sha256Hex(
    JSON.stringify([
      KEY_VERSION,
      parts.jobName,
      parts.runId,
      parts.stepId,
      parts.itemKey,
      parts.attempt,
    ]),
  ).slice(0, 32);
  const prefix = [
    KEY_VERSION,
    slug(parts.jobName, 40),
    slug(parts.runId, 40),
    slug(parts.stepId, 32),
    slug(parts.itemKey, 40),
    `a${parts.attempt}`,
  ].join('-');
  // The prefix is at most ~170 characters; the cap is belt and braces.
  return `${prefix}-${digest}`.slice(-LIMITS.idempotencyKeyMax);
}

const RUN_ID_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * A new run id, sortable by creation time: `YYYYMMDD-HHMMSS-mmm-` (UTC) then
 * 6 random characters, e.g. `20260105-143012-123-k3f9a2`.
 */
export function newRunId(now: Date = new Date()): string {
  const iso = now.toISOString(); // 2026-01-05T14:30:12.123Z
  const stamp = `${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}-${iso.slice(20, 23)}`;
  const random = Array.from(randomBytes(6), (b) => RUN_ID_ALPHABET[b % 32]).join('');
  return `${stamp}-${random}`;
}
