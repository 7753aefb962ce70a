/**
 * Helpers of the security tests: a fresh emulator per test, a job that
 * uploads, trains and generates, and a scanner that looks for the key in
 * every byte the run left behind. Temp folders, spawned runs (the real
 * binary, so stdout/stderr/process title are the real ones) and polling come
 * from the test kit.
 */
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { EmulatorOptions, RunningEmulator } from '../../src/emulator/index.js';
import { REPO, scaledLimits, testEmulator } from '../helpers/index.js';

export const TIME_SCALE = 100;
export const LIMITS = scaledLimits(TIME_SCALE);

/** An emulator at TIME_SCALE (seed 11), stopped after the test. */
export function emulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  return testEmulator({ seed: 11, timeScale: TIME_SCALE, ...options });
}

/** Uploads three reference PNGs, trains an influencer, generates with it and edits an upload. */
export const SECURITY_JOB = `version: 1
name: security
uploads:
  refs:
    files: ["refs/*.png"]
influencers:
  ava:
    name: Ava Stone
    style: realistic
    gender: female
    images: refs
    consentAcknowledged: true
generations:
  - id: photos
    model: flux-portrait
    influencer: ava
    matrix:
      scene: [beach, rooftop]
    input:
      prompt: "Ava at a {{ scene }}"
      aspectRatio: "9:16"
  - id: retouch
    model: nano-edit
    input:
      prompt: "studio background"
      image: upload:refs/ava-1.png
`;

export async function writeJob(dir: string, job = SECURITY_JOB): Promise<string> {
  await mkdir(path.join(dir, 'refs'), { recursive: true });
  for (const name of ['ava-1.png', 'ava-2.png', 'ava-3.png']) {
    await copyFile(
      path.join(REPO, 'examples/influencer-series/refs', name),
      path.join(dir, 'refs', name),
    );
  }
  const jobPath = path.join(dir, 'job.yaml');
  await writeFile(jobPath, job);
  return jobPath;
}

/** Every file under `dir` (recursively), with its bytes. */
export async function allFiles(dir: string): Promise<Array<{ file: string; bytes: Buffer }>> {
  const out: Array<{ file: string; bytes: Buffer }> = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    out.push({ file, bytes: await readFile(file) });
  }
  return out;
}

/** The forms a leaked key could take: verbatim, its secret hex part, base64 of it. */
export function keyNeedles(apiKey: string): string[] {
  const hex = apiKey.replace(/^ifk_live_/, '');
  return [apiKey, hex, Buffer.from(apiKey).toString('base64')];
}

/** Names of the places (files or labels) where any form of the key occurs. */
export function leaksIn(
  places: ReadonlyArray<{ file: string; bytes: Buffer | string }>,
  apiKey: string,
): string[] {
  const needles = keyNeedles(apiKey);
  return places
    .filter(({ bytes }) => {
      const buffer = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
      // UTF-16 too: SQLite may store text that way.
      return needles.some(
        (n) => buffer.includes(Buffer.from(n)) || buffer.includes(Buffer.from(n, 'utf16le')),
      );
    })
    .map(({ file }) => file);
}
