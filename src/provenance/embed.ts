/** Embeds provenance in an output's bytes, by media type; never re-encodes pixels. */
import { embedJpeg } from './jpeg.js';
import { embedMp4 } from './mp4.js';
import { embedPng } from './png.js';
import { embedWebp } from './webp.js';
import { aiLabel, type EmbeddedFacts, xmpPacket } from './xmp.js';

/**
 * `bytes` with the provenance metadata of `facts` embedded, or undefined when
 * the format is not PNG, JPEG, WebP or MP4/QuickTime, or this file cannot take
 * it safely (see each format's function); the caller then keeps the bytes as
 * served, and the sidecar still says everything.
 */
export function embedProvenance(
  mime: string,
  bytes: Buffer,
  facts: EmbeddedFacts,
): Buffer | undefined {
  const xmp = xmpPacket(facts);
  switch (mime) {
    case 'image/png':
      return embedPng(bytes, {
        xmp,
        text: {
          ...(facts.prompt === undefined ? {} : { Description: facts.prompt }),
          Disclaimer: aiLabel(facts),
          Software: facts.creatorTool,
        },
      });
    case 'image/jpeg':
      return embedJpeg(bytes, xmp);
    case 'image/webp':
      return embedWebp(bytes, xmp);
    case 'video/mp4':
    case 'video/quicktime':
      return embedMp4(bytes, xmp);
    default:
      return undefined;
  }
}
