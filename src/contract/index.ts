/**
 * @module contract
 * The service's wire contract, shared by the client and the emulator.
 */

export * from './endpoints.js';
export * from './error-codes.js';
export * from './failure-meaning.js';
export * from './limits.js';
export * from './media-types.js';
export * from './model-options.js';
export * from './outcome.js';
export * from './schemas.js';
