/**
 * The local gate the Redis gate runs on while Redis is unreachable: each
 * bucket cut to 1/peers, starting from what was already spent (see
 * `occupiedAtOutage`), holding the current pause.
 */
import type { Bucket } from '../../contract/index.js';
import type { GateEmitter } from '../gate-events.js';
import { createLocalGate, type RateGate } from '../local-gate.js';
import type { ResolvedRedisOptions } from './options.js';
import type { SlotLists } from './store.js';

export function createFallbackGate(input: {
  readonly options: ResolvedRedisOptions;
  readonly occupied: SlotLists;
  readonly pausedUntil: number;
  readonly slotLifeMs: (bucket: Bucket) => number;
  /** Each local grant, per bucket, with its slot's expiry (to write back later). */
  readonly onGrant: (bucket: Bucket, expiry: number) => void;
  /** The Redis gate's emitter: local grants and shrinks are its events. */
  readonly events: GateEmitter;
}): RateGate {
  const gate = createLocalGate(input.options.fallbackGateLimits, {
    marginMs: input.options.marginMs,
    defaultRetryAfterMs: input.options.defaultRetryAfterMs,
    occupied: input.occupied,
  });
  gate.on('grant', (event) => {
    for (const bucket of event.buckets) input.onGrant(bucket, event.at + input.slotLifeMs(bucket));
    input.events.emit('grant', event);
  });
  gate.on('shrink', (event) => input.events.emit('shrink', event));
  if (input.pausedUntil > Date.now()) gate.pauseUntil(input.pausedUntil);
  return gate;
}
