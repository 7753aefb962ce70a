import { EXIT, IbatchError } from '../shared/index.js';

/** An acquire on (or pending when) a gate was closed: the run is shutting down. */
export class GateClosedError extends IbatchError {
  constructor() {
    super(
      'gate_closed',
      'The rate gate was closed while a request waited for it',
      EXIT.interrupted,
    );
  }
}

/**
 * A request waited at the gate longer than any wait the limits can explain
 * (the longest Retry-After ibatch waits out plus the longest window): the
 * account's limits, or the runners sharing them through Redis, never freed a
 * slot. Exit 4: the run stops, resumable.
 */
export class RateWaitTooLongError extends IbatchError {
  constructor(buckets: readonly string[], waitedMs: number) {
    super(
      'rate_wait_too_long',
      `a request waited ${Math.round(waitedMs / 60_000)} min for the rate limits (${buckets.join(', ')}), longer than any pause or window explains; run again later to resume`,
      EXIT.unreachable,
    );
  }
}
