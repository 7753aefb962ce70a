import { randomUUID } from 'node:crypto';
import { LIMITS } from '../contract/index.js';
import { UsageError } from '../shared/index.js';

/** A fresh key for a create the caller did not key itself (safe to retry within this process). */
export function generateIdempotencyKey(): string {
  return `ibatch-${randomUUID()}`;
}

export function checkIdempotencyKey(key: string): string {
  if (key.length < 1 || key.length > LIMITS.idempotencyKeyMax || !/^[\x21-\x7e]+$/.test(key)) {
    throw new UsageError(
      `Expected an Idempotency-Key of 1 to ${LIMITS.idempotencyKeyMax} visible ASCII characters, got ${JSON.stringify(key.slice(0, 40))}`,
    );
  }
  return key;
}
