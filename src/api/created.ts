/**
 * Create calls (training, generation) answer 202 when they did the work and,
 * on the emulator, 200 when an identical request with the same key was
 * replayed (the reference leaves replays "not shown"). The body comes back
 * as-is, with the facts about the call attached as NON-enumerable properties:
 * `result.ids[0]` and `result.replayed` both work, and `JSON.stringify(result)`
 * / `{ ...result }` give exactly the service's body.
 */

export interface CreateFacts {
  /** True when the service answered from its idempotency record (HTTP 200, or an `Idempotent-Replayed: true` header). */
  readonly replayed: boolean;
  /** The Idempotency-Key the request carried (generated when the caller gave none). */
  readonly idempotencyKey: string;
  /** HTTP status of the final answer (202 or 200). */
  readonly httpStatus: number;
  /** `X-Request-Id` of the answer, when present. */
  readonly requestId: string | undefined;
}

export type Created<T> = T & CreateFacts;

export function withCreateFacts<T extends object>(body: T, facts: CreateFacts): Created<T> {
  for (const [name, value] of Object.entries(facts)) {
    Object.defineProperty(body, name, {
      value,
      enumerable: false,
      writable: false,
      configurable: true,
    });
  }
  return body as Created<T>;
}
