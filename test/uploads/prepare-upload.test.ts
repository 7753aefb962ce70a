import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LIMITS, TRAINING_IMAGE_TYPES } from '../../src/contract/index.js';
import { sha256Hex } from '../../src/shared/index.js';
import {
  expandUploadSet,
  prepareUpload,
  UploadInputError,
  UploadRejectedError,
} from '../../src/uploads/index.js';
import { tempDir } from '../helpers/index.js';
import { SAMPLES } from './fixtures/media-samples.js';

describe('prepareUpload', () => {
  it('sniffs the type from the bytes, not the extension, and hashes the content', async () => {
    const dir = tempDir('uploads');
    const file = path.join(dir, 'looks-like.jpg');
    writeFileSync(file, SAMPLES.png);
    const prepared = await prepareUpload(file, { allowedTypes: TRAINING_IMAGE_TYPES });
    expect(prepared).toEqual({
      path: file,
      sizeBytes: SAMPLES.png.length,
      sha256: sha256Hex(SAMPLES.png),
      mime: 'image/png',
      ext: 'png',
      category: 'image',
    });
  });

  it('accepts exactly 8 MiB and rejects one byte more, naming the file and its size', async () => {
    const dir = tempDir('uploads');
    const ok = path.join(dir, 'ok.jpg');
    writeFileSync(ok, SAMPLES.jpeg);
    truncateSync(ok, LIMITS.uploadMaxBytes);
    await expect(prepareUpload(ok)).resolves.toMatchObject({ sizeBytes: LIMITS.uploadMaxBytes });
    const big = path.join(dir, 'big.jpg');
    writeFileSync(big, SAMPLES.jpeg);
    truncateSync(big, LIMITS.uploadMaxBytes + 1);
    const error = await prepareUpload(big).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UploadRejectedError);
    expect((error as UploadRejectedError).exitCode).toBe(2);
    expect((error as Error).message).toContain(big);
    expect((error as Error).message).toContain(String(LIMITS.uploadMaxBytes + 1));
  });

  it('rejects empty files, unknown bytes and disallowed categories', async () => {
    const dir = tempDir('uploads');
    const empty = path.join(dir, 'empty.png');
    writeFileSync(empty, '');
    await expect(prepareUpload(empty)).rejects.toThrow(/empty/);
    const html = path.join(dir, 'page.png');
    writeFileSync(html, SAMPLES.html);
    await expect(prepareUpload(html)).rejects.toThrow(UploadRejectedError);
    const gif = path.join(dir, 'anim.gif');
    writeFileSync(gif, SAMPLES.gif);
    await expect(prepareUpload(gif, { allowedTypes: TRAINING_IMAGE_TYPES })).rejects.toThrow(
      /image\/gif/,
    );
    const clip = path.join(dir, 'clip.mp4');
    writeFileSync(clip, SAMPLES.mp4);
    await expect(prepareUpload(clip, { allowed: ['image'] })).rejects.toThrow(/video\/mp4/);
    await expect(prepareUpload(clip, { allowed: ['video', 'audio'] })).resolves.toMatchObject({
      category: 'video',
    });
  });

  it('rejects a folder and a missing file with a typed error', async () => {
    const dir = tempDir('uploads');
    await expect(prepareUpload(dir)).rejects.toThrow(UploadRejectedError);
    await expect(prepareUpload(path.join(dir, 'nope.png'))).rejects.toThrow(UploadRejectedError);
  });
});

describe('expandUploadSet', () => {
  it('expands globs (including ../) into sorted, de-duplicated regular files', async () => {
    const root = tempDir('uploads');
    const job = path.join(root, 'job');
    mkdirSync(path.join(job, 'refs', 'sub.png'), { recursive: true }); // a folder named like a file
    mkdirSync(path.join(root, 'shared'));
    writeFileSync(path.join(job, 'refs', 'b.png'), SAMPLES.png);
    writeFileSync(path.join(job, 'refs', 'a.jpg'), SAMPLES.jpeg);
    writeFileSync(path.join(root, 'shared', 'c.webp'), SAMPLES.webp);
    symlinkSync(path.join(root, 'missing.png'), path.join(job, 'refs', 'dangling.png'));
    const files = await expandUploadSet(job, ['refs/*.png', 'refs/*', '../shared/*.webp']);
    expect(files).toEqual([
      path.join(job, 'refs', 'a.jpg'),
      path.join(job, 'refs', 'b.png'),
      path.join(root, 'shared', 'c.webp'),
    ]);
  });

  it('names the glob that matches nothing', async () => {
    const job = tempDir('uploads');
    writeFileSync(path.join(job, 'a.png'), SAMPLES.png);
    const error = await expandUploadSet(job, ['*.png', 'refs/*.jpg']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UploadInputError);
    expect((error as Error).message).toContain('refs/*.jpg');
  });
});
