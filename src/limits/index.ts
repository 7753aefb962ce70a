/**
 * @module limits
 * Client-side rate limiting: `--limits` parsing and the in-process gate
 * (sliding-window logs per bucket, 429 pauses, Remaining feedback) that the
 * HTTP client calls before every send. See docs/limits.md.
 */

export { GateClosedError } from './errors.js';
export type { GateEventName, GateEvents, GateListener } from './gate-events.js';
export {
  type BucketSnapshot,
  createLocalGate,
  type GateSnapshot,
  type LocalGateOptions,
  type RateGate,
} from './local-gate.js';
export { formatLimits, parseLimitsSpec } from './parse-limits.js';
export { SlidingWindowLog } from './sliding-window-log.js';
