/**
 * The one table of media (file) types: what the client can recognise, what
 * the service accepts for upload (service reference, `POST /assets/presign`:
 * "a supported image, video or audio type") and for training ("JPEG, PNG or
 * WebP"). The uploader sniffs bytes into these entries, the job loader maps
 * file extensions onto them and the emulator accepts exactly the uploadable
 * ones, so the three can never disagree.
 */
import { extname } from 'node:path';

export const MEDIA_CATEGORIES = ['image', 'video', 'audio'] as const;
export type MediaCategory = (typeof MEDIA_CATEGORIES)[number];

export interface MediaType {
  /** Canonical MIME type, e.g. `image/jpeg`. */
  readonly mime: string;
  /** File extension without the dot, e.g. `jpg`. */
  readonly ext: string;
  readonly category: MediaCategory;
}

function media(mime: string, ext: string, category: MediaCategory): MediaType {
  return Object.freeze({ mime, ext, category });
}

/** Every type the client can recognise, by short name. */
export const MEDIA_TYPES = {
  jpeg: media('image/jpeg', 'jpg', 'image'),
  png: media('image/png', 'png', 'image'),
  webp: media('image/webp', 'webp', 'image'),
  gif: media('image/gif', 'gif', 'image'),
  avif: media('image/avif', 'avif', 'image'),
  heic: media('image/heic', 'heic', 'image'),
  mp4: media('video/mp4', 'mp4', 'video'),
  mov: media('video/quicktime', 'mov', 'video'),
  threeGp: media('video/3gpp', '3gp', 'video'),
  webm: media('video/webm', 'webm', 'video'),
  mkv: media('video/x-matroska', 'mkv', 'video'),
  ogv: media('video/ogg', 'ogv', 'video'),
  mp3: media('audio/mpeg', 'mp3', 'audio'),
  wav: media('audio/wav', 'wav', 'audio'),
  m4a: media('audio/mp4', 'm4a', 'audio'),
  aac: media('audio/aac', 'aac', 'audio'),
  ogg: media('audio/ogg', 'ogg', 'audio'),
  flac: media('audio/flac', 'flac', 'audio'),
} as const;

/** The types the service accepts for upload. */
export const UPLOAD_MEDIA_TYPES: readonly MediaType[] = [
  MEDIA_TYPES.jpeg,
  MEDIA_TYPES.png,
  MEDIA_TYPES.webp,
  MEDIA_TYPES.gif,
  MEDIA_TYPES.mp4,
  MEDIA_TYPES.webm,
  MEDIA_TYPES.mov,
  MEDIA_TYPES.mp3,
  MEDIA_TYPES.wav,
  MEDIA_TYPES.m4a,
  MEDIA_TYPES.ogg,
];

/** The only types training accepts (reference: "JPEG, PNG or WebP"). */
export const TRAINING_IMAGE_TYPES: readonly MediaType[] = [
  MEDIA_TYPES.jpeg,
  MEDIA_TYPES.png,
  MEDIA_TYPES.webp,
];

/** Other spellings of a MIME type that mean the same type. */
export const MIME_ALIASES: Readonly<Record<string, string>> = {
  'image/jpg': 'image/jpeg',
  'image/pjpeg': 'image/jpeg',
  'audio/mp3': 'audio/mpeg',
  'audio/x-wav': 'audio/wav',
  'audio/wave': 'audio/wav',
  'audio/x-m4a': 'audio/mp4',
  'audio/m4a': 'audio/mp4',
};

/**
 * The uploadable type of a file name by its extension (`.jpeg` too), or
 * undefined for a type the service does not take. Only for checks before a
 * file is read: the uploader decides from the bytes.
 */
export function uploadTypeOfFileName(name: string): MediaType | undefined {
  const ext = extname(name).slice(1).toLowerCase();
  return UPLOAD_MEDIA_TYPES.find((t) => t.ext === (ext === 'jpeg' ? 'jpg' : ext));
}
