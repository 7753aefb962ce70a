/**
 * MP4 / QuickTime: the XMP packet in a top-level `uuid` box (the XMP
 * specification's UUID BE7ACFCB-97A9-42E8-9C71-999491E3AFAC) appended at the
 * end of the file, so no offset in `moov` (chunk offsets into `mdat`) moves.
 */
const XMP_UUID = Buffer.from('be7acfcb97a942e89c71999491e3afac', 'hex');
/** The C2PA manifest store's `uuid` box: its signature covers the whole file. */
const C2PA_UUID = Buffer.from('d8fec3d61b0e483c92975828877ec481', 'hex');

/**
 * `mp4` with the XMP box appended; undefined when its top-level boxes do not
 * end exactly at the end of the file (a box "to the end of the file", or a
 * torn one: appending would break it), there is no `ftyp`, or it already has
 * an XMP or C2PA `uuid` box.
 */
export function embedMp4(mp4: Buffer, xmp: string): Buffer | undefined {
  if (mp4.length < 8 || mp4.toString('latin1', 4, 8) !== 'ftyp') return undefined;
  for (let at = 0; at < mp4.length; ) {
    if (at + 8 > mp4.length) return undefined;
    let size = mp4.readUInt32BE(at);
    let header = 8;
    if (size === 1) {
      if (at + 16 > mp4.length) return undefined;
      size = Number(mp4.readBigUInt64BE(at + 8));
      header = 16;
    }
    if (size < header || at + size > mp4.length) return undefined;
    if (mp4.toString('latin1', at + 4, at + 8) === 'uuid') {
      const id = mp4.subarray(at + header, at + header + 16);
      if (id.equals(XMP_UUID) || id.equals(C2PA_UUID)) return undefined;
    }
    at += size;
  }
  const packet = Buffer.from(xmp, 'utf8');
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + 16 + packet.length, 0);
  head.write('uuid', 4, 'latin1');
  return Buffer.concat([mp4, head, XMP_UUID, packet]);
}
