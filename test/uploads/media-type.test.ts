import { describe, expect, it } from 'vitest';
import {
  TRAINING_IMAGE_TYPES,
  UPLOAD_MEDIA_TYPES,
  uploadTypeOfFileName,
} from '../../src/contract/index.js';
import { SUPPORTED_MIME_TYPES } from '../../src/emulator/index.js';
import { mediaTypeForMime, sniffMediaType } from '../../src/uploads/index.js';
import { SAMPLES } from './fixtures/media-samples.js';

describe('sniffMediaType', () => {
  it.each([
    ['jpeg', 'image/jpeg', 'jpg', 'image'],
    ['png', 'image/png', 'png', 'image'],
    ['webp', 'image/webp', 'webp', 'image'],
    ['gif', 'image/gif', 'gif', 'image'],
    ['avif', 'image/avif', 'avif', 'image'],
    ['mp4', 'video/mp4', 'mp4', 'video'],
    ['mov', 'video/quicktime', 'mov', 'video'],
    ['webm', 'video/webm', 'webm', 'video'],
    ['mkv', 'video/x-matroska', 'mkv', 'video'],
    ['m4a', 'audio/mp4', 'm4a', 'audio'],
    ['mp3Id3', 'audio/mpeg', 'mp3', 'audio'],
    ['mp3Sync', 'audio/mpeg', 'mp3', 'audio'],
    ['aac', 'audio/aac', 'aac', 'audio'],
    ['wav', 'audio/wav', 'wav', 'audio'],
    ['ogg', 'audio/ogg', 'ogg', 'audio'],
  ] as const)('recognises %s', (sample, mime, ext, category) => {
    expect(sniffMediaType(SAMPLES[sample])).toEqual({ mime, ext, category });
  });

  it('rejects text, empty and truncated input', () => {
    expect(sniffMediaType(SAMPLES.html)).toBeUndefined();
    expect(sniffMediaType(new Uint8Array())).toBeUndefined();
    expect(sniffMediaType(Uint8Array.from([0xff, 0xd8]))).toBeUndefined();
    expect(sniffMediaType(Buffer.from('RIFF\0\0\0\0AVI '))).toBeUndefined();
  });

  it('training accepts exactly JPEG, PNG and WebP', () => {
    expect(TRAINING_IMAGE_TYPES.map((t) => t.mime)).toEqual([
      'image/jpeg',
      'image/png',
      'image/webp',
    ]);
  });
});

describe('mediaTypeForMime', () => {
  it('ignores parameters, case and common aliases', () => {
    expect(mediaTypeForMime('IMAGE/PNG; charset=binary')?.ext).toBe('png');
    expect(mediaTypeForMime('image/jpg')?.mime).toBe('image/jpeg');
    expect(mediaTypeForMime('text/html')).toBeUndefined();
    expect(mediaTypeForMime(undefined)).toBeUndefined();
  });
});

describe('one media type table (src/contract/media-types.ts)', () => {
  it('maps the extensions the job loader took before to the same MIME types', () => {
    const before: Record<string, string> = {
      'a.jpg': 'image/jpeg',
      'a.JPEG': 'image/jpeg',
      'a.png': 'image/png',
      'a.webp': 'image/webp',
      'a.gif': 'image/gif',
      'a.mp4': 'video/mp4',
      'a.mov': 'video/quicktime',
      'a.webm': 'video/webm',
      'a.mp3': 'audio/mpeg',
      'a.wav': 'audio/wav',
      'a.m4a': 'audio/mp4',
      'a.ogg': 'audio/ogg',
    };
    for (const [name, mime] of Object.entries(before)) {
      expect(uploadTypeOfFileName(`refs/${name}`)?.mime, name).toBe(mime);
    }
    for (const name of ['a.heic', 'a.flac', 'a.txt', 'noext', 'dir.png/file']) {
      expect(uploadTypeOfFileName(name), name).toBeUndefined();
    }
  });

  it('the emulator accepts exactly the uploadable types (and audio/x-wav)', () => {
    expect(Object.keys(SUPPORTED_MIME_TYPES).sort()).toEqual(
      [...UPLOAD_MEDIA_TYPES.map((t) => t.mime), 'audio/x-wav'].sort(),
    );
  });
});
