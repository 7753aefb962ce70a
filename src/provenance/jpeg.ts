/**
 * JPEG: an APP1 segment holding the XMP packet (`http://ns.adobe.com/xap/1.0/\0`
 * then the packet), inserted after the leading APP0/APP1 segments (JFIF,
 * Exif) as the XMP specification places it. The entropy-coded data is copied
 * byte for byte.
 */
import { jpegSegment } from '../media/index.js';

const XMP_HEADER = Buffer.from('http://ns.adobe.com/xap/1.0/\0', 'latin1');
/** A segment's length field counts itself (2 bytes) and is at most 0xffff. */
const MAX_XMP_BYTES = 0xffff - 2 - XMP_HEADER.length;

/**
 * `jpeg` with an XMP APP1 segment; undefined when it is no JPEG, its header
 * segments are malformed, it already has XMP, it carries C2PA/JUMBF (APP11:
 * any change would break its signature) or the packet does not fit one
 * segment (Extended XMP is not written).
 */
export function embedJpeg(jpeg: Buffer, xmp: string): Buffer | undefined {
  if (jpeg.length < 4 || jpeg[0] !== 0xff || jpeg[1] !== 0xd8) return undefined;
  const packet = Buffer.from(xmp, 'utf8');
  if (packet.length > MAX_XMP_BYTES) return undefined;
  let insertAt = 2;
  let leading = true;
  for (let at = 2; ; ) {
    if (at + 4 > jpeg.length || jpeg[at] !== 0xff) return undefined;
    const marker = jpeg[at + 1] ?? 0;
    // Start of scan or frame: the header segments are over.
    if (marker === 0xda || (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xcc))
      break;
    const length = jpeg.readUInt16BE(at + 2);
    const end = at + 2 + length;
    if (length < 2 || end > jpeg.length) return undefined;
    const body = jpeg.subarray(at + 4, end);
    if (marker === 0xe1 && body.subarray(0, XMP_HEADER.length).equals(XMP_HEADER)) return undefined;
    if (marker === 0xeb) return undefined;
    if (leading && (marker === 0xe0 || marker === 0xe1)) insertAt = end;
    else leading = false;
    at = end;
  }
  return Buffer.concat([
    jpeg.subarray(0, insertAt),
    jpegSegment(0xe1, Buffer.concat([XMP_HEADER, packet])),
    jpeg.subarray(insertAt),
  ]);
}
