/**
 * Idempotency records per account, for the two creates. A key maps to the
 * canonical JSON of (endpoint, path model id, body) and the original answer.
 * Only accepted (202) creates are recorded: a create that failed validation
 * or credits can be retried with the same key and is evaluated afresh.
 */
import { LIMITS } from '../contract/index.js';
import { validationError } from './http-error.js';

export interface StoredAnswer {
  readonly fingerprint: string;
  readonly body: unknown;
}

/** Reads and checks the header; `required` for training. */
export function idempotencyKeyOf(
  header: string | string[] | undefined,
  required: boolean,
): string | undefined {
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined || key === '') {
    if (required) throw validationError('Idempotency-Key: header is required');
    return undefined;
  }
  if (key.length > LIMITS.idempotencyKeyMax) {
    throw validationError(
      `Idempotency-Key: must be at most ${LIMITS.idempotencyKeyMax} characters, got ${key.length}`,
    );
  }
  return key;
}

export type IdempotencyLookup =
  | { kind: 'new' }
  | { kind: 'replay'; body: unknown }
  | { kind: 'conflict' };

export class IdempotencyStore {
  private readonly byAccount = new Map<string, Map<string, StoredAnswer>>();

  lookup(accountId: string, key: string, fingerprint: string): IdempotencyLookup {
    const stored = this.byAccount.get(accountId)?.get(key);
    if (!stored) return { kind: 'new' };
    return stored.fingerprint === fingerprint
      ? { kind: 'replay', body: stored.body }
      : { kind: 'conflict' };
  }

  remember(accountId: string, key: string, answer: StoredAnswer): void {
    let map = this.byAccount.get(accountId);
    if (!map) {
      map = new Map();
      this.byAccount.set(accountId, map);
    }
    map.set(key, answer);
  }
}
