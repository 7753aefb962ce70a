/** JPEG's container: one marker segment. */

/** One JPEG marker segment (0xFF `marker`) whose length counts itself and `body`. */
export function jpegSegment(marker: number, body: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(0xff00 | marker, 0);
  head.writeUInt16BE(body.length + 2, 2);
  return Buffer.concat([head, body]);
}
