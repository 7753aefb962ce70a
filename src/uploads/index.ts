/**
 * @module uploads
 * Local files -> upload-ready descriptions (type sniffed from the bytes, size
 * checked, sha256 for reuse), and the presign + PUT sequence with expiry
 * handling. No HTTP of its own: the transport is passed in.
 */
export * from './errors.js';
export { expandGlobs, expandUploadSet, type GlobExpansion } from './expand-upload-set.js';
export * from './media-type.js';
export {
  hashFile,
  type PreparedUpload,
  type PrepareUploadOptions,
  prepareUpload,
} from './prepare-upload.js';
export {
  isPresignExpiry,
  type PresignFn,
  type PutContext,
  type PutFn,
  type UploadWithPresignOptions,
  uploadWithPresign,
} from './upload-with-presign.js';
