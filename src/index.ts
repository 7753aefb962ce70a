/**
 * @module influencer-batch
 * Library entry point. The CLI is a thin layer over these exports.
 */
export * from './contract/index.js';
export * from './shared/index.js';
export { VERSION } from './version.js';
