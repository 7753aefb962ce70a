import { describe, expect, it } from 'vitest';
import { mediaTypeForMime, sniffMediaType, TRAINING_IMAGE_TYPES } from '../../src/uploads/index.js';
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
