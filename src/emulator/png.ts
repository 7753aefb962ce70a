/**
 * Output media built from the generation id, so every generation has its own
 * bytes: a 64x64 RGB PNG gradient (chunks by the provenance writer) and the embedded MP4
 * clip with a trailing `free` box carrying the id.
 */
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { PNG_SIGNATURE, pngChunk } from '../media/index.js';
import { VIDEO_CLIP } from './video-clip.js';

/** A size x size gradient whose two corner colours derive from `id`. */
export function pngFor(id: string, size = 64): Buffer {
  const h = createHash('sha256').update(id).digest();
  const from = [h[0] ?? 0, h[1] ?? 0, h[2] ?? 0];
  const to = [h[3] ?? 255, h[4] ?? 255, h[5] ?? 255];
  const rowBytes = size * 3 + 1;
  const raw = Buffer.alloc(rowBytes * size);
  for (let y = 0; y < size; y++) {
    raw[y * rowBytes] = 0; // filter: none
    for (let x = 0; x < size; x++) {
      const t = (x + y) / (2 * (size - 1));
      for (let c = 0; c < 3; c++) {
        const a = from[c] ?? 0;
        const b = to[c] ?? 0;
        raw[y * rowBytes + 1 + x * 3 + c] = Math.round(a + (b - a) * t);
      }
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: RGB
  ihdr[10] = 0;
  ihdr[11] = 0;
  ihdr[12] = 0;
  return Buffer.concat([
    PNG_SIGNATURE,
    pngChunk('IHDR', ihdr),
    pngChunk('tEXt', Buffer.from(`Comment\0ibatch emulator ${id}`, 'latin1')),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The clip plus a trailing `free` box naming the generation (players skip it). */
export function videoFor(id: string): Buffer {
  const payload = Buffer.from(`ibatch emulator ${id}`, 'utf8');
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + payload.length, 0);
  header.write('free', 4, 'ascii');
  return Buffer.concat([VIDEO_CLIP, header, payload]);
}
