/**
 * @module deliver
 * Delivery (docs/deliver.md): a job's current or approved outputs,
 * their provenance sidecars and their manifest copied to S3-compatible
 * storage, idempotent (sha256 in each object's metadata) and journaled so a
 * killed delivery resumes without sending anything twice.
 */
export { type DeliverOptions, type DeliveryResult, deliverOutputs } from './deliver.js';
export * from './errors.js';
export { type ObjectStore, openS3Store, type S3StoreOptions, s3EndpointOf } from './s3-store.js';
