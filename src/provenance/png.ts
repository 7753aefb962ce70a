/**
 * PNG: an `iTXt` chunk `XML:com.adobe.xmp` (the XMP packet) and plain text
 * chunks (`Description`: the prompt, `Disclaimer`: the AI label, `Software`)
 * inserted right after `IHDR`. Other chunks are copied byte for byte, so
 * pixels are never re-encoded.
 */
import { PNG_SIGNATURE, pngChunk } from '../media/index.js';

const XMP_KEYWORD = 'XML:com.adobe.xmp';

export interface PngText {
  readonly xmp: string;
  /** Keyword → text (UTF-8, as `iTXt`). */
  readonly text: Readonly<Record<string, string>>;
}

interface Chunk {
  readonly type: string;
  readonly start: number;
  readonly end: number;
  readonly data: Buffer;
}

/** The chunks of a well-formed PNG up to `IEND`, or undefined. */
function chunksOf(png: Buffer): Chunk[] | undefined {
  if (png.length < 8 || !png.subarray(0, 8).equals(PNG_SIGNATURE)) return undefined;
  const chunks: Chunk[] = [];
  for (let at = 8; at + 12 <= png.length; ) {
    const length = png.readUInt32BE(at);
    const end = at + 12 + length;
    if (end > png.length) return undefined;
    const type = png.toString('latin1', at + 4, at + 8);
    chunks.push({ type, start: at, end, data: png.subarray(at + 8, at + 8 + length) });
    if (type === 'IEND') return chunks;
    at = end;
  }
  return undefined;
}

/** An uncompressed `iTXt` chunk (keyword, no language, UTF-8 text). */
function itxt(keyword: string, text: string): Buffer {
  return pngChunk(
    'iTXt',
    Buffer.concat([Buffer.from(`${keyword}\0\0\0\0\0`, 'latin1'), Buffer.from(text, 'utf8')]),
  );
}

/**
 * `png` with the XMP and text chunks; undefined when it is not a well-formed
 * PNG, already carries XMP (ours would be a second, conflicting packet) or
 * C2PA content credentials (`caBX`: any change would break their signature).
 */
export function embedPng(png: Buffer, meta: PngText): Buffer | undefined {
  const chunks = chunksOf(png);
  const ihdr = chunks?.[0];
  if (!chunks || ihdr?.type !== 'IHDR') return undefined;
  const hasXmp = chunks.some(
    (c) =>
      c.type === 'iTXt' &&
      c.data.toString('latin1', 0, XMP_KEYWORD.length + 1) === `${XMP_KEYWORD}\0`,
  );
  if (hasXmp || chunks.some((c) => c.type === 'caBX')) return undefined;
  const added = [
    itxt(XMP_KEYWORD, meta.xmp),
    ...Object.entries(meta.text).map(([keyword, text]) => itxt(keyword, text)),
  ];
  return Buffer.concat([png.subarray(0, ihdr.end), ...added, png.subarray(ihdr.end)]);
}
