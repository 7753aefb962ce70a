/**
 * The review page serves only the bytes the run recorded: a hard link planted
 * under a listed name (`ln /etc/passwd out/...png`) passes every path check
 * (it is a plain file inside the folder), so the file's size and sha256 are
 * checked against the journal's record before a byte is sent.
 */
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ReviewedOutput } from '../../src/review/server/index.js';
import { tempDir } from '../helpers/index.js';
import { pipelineRun, type RunDone, reviewServer } from './helpers.js';

let run: RunDone;
beforeAll(async () => {
  run = await pipelineRun('review-hard-links');
}, 120_000);

const fileUrl = (file: string) => `/files/${file.split('/').map(encodeURIComponent).join('/')}`;

async function photoOf(base: string, token: string): Promise<string> {
  const res = await fetch(`${base}/api/outputs?limit=500`, {
    headers: { 'X-Ibatch-Token': token },
  });
  const { outputs } = (await res.json()) as { outputs: ReviewedOutput[] };
  const photo = outputs.find((o) => o.step === 'photos' && o.file)?.file;
  if (!photo) throw new Error('no photo');
  return photo;
}

describe('review page: hard links', () => {
  it('a hard link planted under a listed name is refused; the recorded file is served, twice', async () => {
    const { base, token } = await reviewServer(run);
    const photo = await photoOf(base, token);
    const get = (file: string) => fetch(`${base}${fileUrl(file)}?token=${token}`);

    const good = await get(photo);
    expect(good.status).toBe(200);
    const original = readFileSync(path.join(run.out, photo));
    expect(Buffer.from(await good.arrayBuffer())).toEqual(original);
    // Checked once, then served from the check's memory: still the same bytes.
    expect(Buffer.from(await (await get(photo)).arrayBuffer())).toEqual(original);

    // Same size as the photo, other bytes: only the hash tells them apart.
    const secret = path.join(tempDir('review-outside'), 'secret');
    writeFileSync(secret, Buffer.alloc(original.length, 'S'));
    const planted = path.join(run.out, photo);
    rmSync(planted);
    linkSync(secret, planted);
    try {
      const res = await get(photo);
      expect(res.status).toBe(403);
      expect(await res.text()).not.toContain('SSSS');
      const head = await fetch(`${base}${fileUrl(photo)}?token=${token}`, { method: 'HEAD' });
      expect(head.status).toBe(403);
    } finally {
      rmSync(planted);
      writeFileSync(planted, original);
    }
    expect((await get(photo)).status).toBe(200);
  });
});
