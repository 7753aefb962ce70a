/**
 * @module limits
 * Client-side rate limiting: `--limits` parsing and the in-process gate
 * (sliding-window logs per bucket, 429 pauses, Remaining feedback) that the
 * HTTP client calls before every send, or the same gate shared through Redis
 * by every runner of an account (`createGate` picks). See docs/limits.md.
 */

export { type CreateGateOptions, createGate } from './create-gate.js';

export { GateClosedError, RateWaitTooLongError } from './errors.js';
export type { GateEventName, GateEvents, GateListener } from './gate-events.js';
export {
  type BucketSnapshot,
  createLocalGate,
  type GateSnapshot,
  type LocalGateOptions,
  type RateGate,
} from './local-gate.js';
export { formatLimits, parseLimitsSpec } from './parse-limits.js';
export {
  createRedisGate,
  type FallbackEvent,
  type RedisGateOptions,
} from './redis/gate.js';
export { storeUrlWithoutCredentials } from './store-url.js';
