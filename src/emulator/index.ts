/**
 * @module emulator
 * A contract-faithful emulator of the media service (real HTTP on loopback)
 * with an admin surface, seeded faults and behaviour switches.
 */

export type { AccountStats, EmulatorStats } from './admin.js';
export { EmulatorAdmin } from './admin-client.js';
export { type RunningEmulator, startEmulator } from './emulator.js';
export { FAULT_KINDS, type FaultKind, isFaultKind } from './fault-kinds.js';
export { parseFaultSpec } from './fault-spec.js';
export type { EmulatorField, EmulatorModel } from './model-types.js';
export { EMULATOR_MODELS } from './models.js';
export {
  type AccountSeed,
  type Behaviour,
  DEFAULT_BEHAVIOUR,
  type EmulatorOptions,
  type FaultConfig,
  type FaultScript,
  type ImageFormat,
  type OutputUrlStyle,
  type StatusCase,
} from './options.js';
export { pngFor } from './png.js';
export { type Price, priceOf, TRAINING_COST } from './pricing.js';
export type { BucketSnapshot } from './rate-limit.js';
export type { LedgerEntry } from './state.js';
export { SUPPORTED_MIME_TYPES } from './uploads.js';
