/**
 * Media type detection from magic bytes. The file name (or a server URL) never
 * decides what a file is: a `.jpg` that holds a PNG is a PNG, and an HTML error
 * page served as `image/png` is not an image. The types themselves live in
 * src/contract/media-types.ts.
 */
import {
  MEDIA_CATEGORIES,
  MEDIA_TYPES,
  type MediaCategory,
  type MediaType,
  MIME_ALIASES,
} from '../contract/index.js';

/** How many leading bytes `sniffMediaType` may look at. */
export const SNIFF_BYTES = 64;

const ascii = (bytes: Uint8Array, from: number, length: number): string =>
  String.fromCharCode(...bytes.subarray(from, from + length));

const startsWith = (bytes: Uint8Array, signature: readonly number[], offset = 0): boolean =>
  signature.every((b, i) => bytes[offset + i] === b);

const FTYP_IMAGE: Record<string, MediaType> = {
  avif: MEDIA_TYPES.avif,
  avis: MEDIA_TYPES.avif,
  heic: MEDIA_TYPES.heic,
  heix: MEDIA_TYPES.heic,
  mif1: MEDIA_TYPES.heic,
  msf1: MEDIA_TYPES.heic,
};

function sniffFtyp(bytes: Uint8Array): MediaType | undefined {
  if (bytes.length < 12 || ascii(bytes, 4, 4) !== 'ftyp') return undefined;
  const brand = ascii(bytes, 8, 4);
  const image = FTYP_IMAGE[brand];
  if (image) return image;
  if (brand.startsWith('M4A') || brand.startsWith('M4B') || brand.startsWith('M4P')) {
    return MEDIA_TYPES.m4a;
  }
  if (brand === 'qt  ') return MEDIA_TYPES.mov;
  if (brand.startsWith('3g')) return MEDIA_TYPES.threeGp;
  // isom, iso2..9, mp41, mp42, avc1, dash, M4V, f4v...: all MP4 video in practice.
  return MEDIA_TYPES.mp4;
}

function sniffMpegAudio(bytes: Uint8Array): MediaType | undefined {
  if (ascii(bytes, 0, 3) === 'ID3') return MEDIA_TYPES.mp3;
  const [b0, b1] = [bytes[0], bytes[1]];
  if (b0 !== 0xff || b1 === undefined) return undefined;
  // 11 sync bits; the layer bits tell MP3 (01, 10, 11) from ADTS AAC (00).
  if ((b1 & 0xe0) !== 0xe0) return undefined;
  const layer = (b1 >> 1) & 0x03;
  if (layer !== 0) return MEDIA_TYPES.mp3;
  return (b1 & 0xf0) === 0xf0 ? MEDIA_TYPES.aac : undefined;
}

/**
 * Detects the media type of a file from its first bytes (at least 12 are
 * needed for most types; pass up to {@link SNIFF_BYTES}). Returns undefined
 * for anything that is not a recognised image, video or audio format.
 */
export function sniffMediaType(bytes: Uint8Array): MediaType | undefined {
  if (bytes.length < 3) return undefined;
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return MEDIA_TYPES.jpeg;
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return MEDIA_TYPES.png;
  const head6 = ascii(bytes, 0, 6);
  if (head6 === 'GIF87a' || head6 === 'GIF89a') return MEDIA_TYPES.gif;
  if (ascii(bytes, 0, 4) === 'RIFF' && bytes.length >= 12) {
    const form = ascii(bytes, 8, 4);
    if (form === 'WEBP') return MEDIA_TYPES.webp;
    if (form === 'WAVE') return MEDIA_TYPES.wav;
    return undefined;
  }
  const ftyp = sniffFtyp(bytes);
  if (ftyp) return ftyp;
  if (startsWith(bytes, [0x1a, 0x45, 0xdf, 0xa3])) {
    return ascii(bytes, 0, Math.min(bytes.length, SNIFF_BYTES)).includes('webm')
      ? MEDIA_TYPES.webm
      : MEDIA_TYPES.mkv;
  }
  if (ascii(bytes, 0, 4) === 'OggS') {
    return ascii(bytes, 0, Math.min(bytes.length, SNIFF_BYTES)).includes('theora')
      ? MEDIA_TYPES.ogv
      : MEDIA_TYPES.ogg;
  }
  if (ascii(bytes, 0, 4) === 'fLaC') return MEDIA_TYPES.flac;
  return sniffMpegAudio(bytes);
}

/**
 * The known media type of a declared `Content-Type` (parameters and case
 * ignored), or undefined. Used only when the bytes cannot be sniffed.
 */
export function mediaTypeForMime(contentType: string | undefined): MediaType | undefined {
  if (!contentType) return undefined;
  const bare = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  const mime = MIME_ALIASES[bare] ?? bare;
  return Object.values(MEDIA_TYPES).find((t) => t.mime === mime);
}

/** The media category of a declared `Content-Type` (`image/*` etc.), if any. */
export function categoryOfMime(contentType: string | undefined): MediaCategory | undefined {
  const top = contentType?.split('/')[0]?.trim().toLowerCase();
  return MEDIA_CATEGORIES.find((c) => c === top);
}
