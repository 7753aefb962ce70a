/**
 * @module media
 * The byte-level writers of image containers (PNG chunks, JPEG segments,
 * RIFF chunks, signatures): shared by provenance, which inserts metadata into
 * downloaded files, and the emulator, which makes small valid images.
 */

export { jpegSegment } from './jpeg.js';
export { PNG_SIGNATURE, pngChunk } from './png.js';
export { riffChunk, webpContainer } from './riff.js';
