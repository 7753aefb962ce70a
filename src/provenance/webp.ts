/**
 * WebP: an `XMP ` chunk at the end of the RIFF container. XMP needs the
 * extended format, so a simple file (`VP8 ` or `VP8L` alone) gets a `VP8X`
 * header chunk first, its canvas size read from the bitstream header; the
 * bitstream itself is copied byte for byte.
 */
import { riffChunk, webpContainer } from '../media/index.js';

const XMP_FLAG = 0x04;
const ALPHA_FLAG = 0x10;

interface RiffChunk {
  readonly fourcc: string;
  readonly start: number;
  readonly end: number;
}

function chunksOf(webp: Buffer): RiffChunk[] | undefined {
  if (webp.length < 20) return undefined;
  if (webp.toString('latin1', 0, 4) !== 'RIFF' || webp.toString('latin1', 8, 12) !== 'WEBP')
    return undefined;
  if (webp.readUInt32LE(4) + 8 !== webp.length) return undefined;
  const chunks: RiffChunk[] = [];
  for (let at = 12; at < webp.length; ) {
    if (at + 8 > webp.length) return undefined;
    const size = webp.readUInt32LE(at + 4);
    const end = at + 8 + size + (size % 2);
    if (end > webp.length) return undefined;
    chunks.push({ fourcc: webp.toString('latin1', at, at + 4), start: at, end });
    at = end;
  }
  return chunks;
}

/** Canvas size and alpha of a simple file's bitstream, or undefined. */
function canvasOf(
  webp: Buffer,
  chunk: RiffChunk,
): { width: number; height: number; alpha: boolean } | undefined {
  const data = webp.subarray(chunk.start + 8, chunk.end);
  if (chunk.fourcc === 'VP8L' && data.length >= 5 && data[0] === 0x2f) {
    const bits = data.readUInt32LE(1);
    return {
      width: (bits & 0x3fff) + 1,
      height: ((bits >>> 14) & 0x3fff) + 1,
      alpha: ((bits >>> 28) & 1) === 1,
    };
  }
  if (chunk.fourcc === 'VP8 ' && data.length >= 10 && data.readUIntBE(3, 3) === 0x9d012a) {
    return {
      width: data.readUInt16LE(6) & 0x3fff,
      height: data.readUInt16LE(8) & 0x3fff,
      alpha: false,
    };
  }
  return undefined;
}

function vp8x(flags: number, width: number, height: number): Buffer {
  const data = Buffer.alloc(10);
  data[0] = flags;
  data.writeUIntLE(width - 1, 4, 3);
  data.writeUIntLE(height - 1, 7, 3);
  return riffChunk('VP8X', data);
}

/**
 * `webp` with an `XMP ` chunk; undefined when it is not a well-formed WebP,
 * already has XMP, or carries C2PA content credentials (a `C2PA` chunk).
 */
export function embedWebp(webp: Buffer, xmp: string): Buffer | undefined {
  const chunks = chunksOf(webp);
  const first = chunks?.[0];
  if (!chunks || !first) return undefined;
  if (chunks.some((c) => c.fourcc === 'XMP ' || c.fourcc === 'C2PA')) return undefined;
  const xmpChunk = riffChunk('XMP ', Buffer.from(xmp, 'utf8'));
  let body: Buffer;
  if (first.fourcc === 'VP8X') {
    const header = Buffer.from(webp.subarray(first.start, first.end));
    header[8] = (header[8] ?? 0) | XMP_FLAG;
    body = Buffer.concat([header, webp.subarray(first.end), xmpChunk]);
  } else {
    const canvas = chunks.length === 1 ? canvasOf(webp, first) : undefined;
    if (!canvas) return undefined;
    const flags = XMP_FLAG | (canvas.alpha ? ALPHA_FLAG : 0);
    body = Buffer.concat([vp8x(flags, canvas.width, canvas.height), webp.subarray(12), xmpChunk]);
  }
  return webpContainer(body);
}
