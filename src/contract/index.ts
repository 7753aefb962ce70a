/**
 * @module contract
 * The service's wire contract, shared by the client and the emulator.
 */
export * from './schemas.js';
export * from './limits.js';
export * from './error-codes.js';
export * from './outcome.js';
export * from './endpoints.js';
export * from './model-options.js';
