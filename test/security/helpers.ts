/**
 * Helpers of the security tests: a fresh emulator per test, a temp folder with
 * a job that uploads, trains and generates, a spawned `ibatch run` (the real
 * binary, so stdout/stderr/process title are the real ones), and a scanner
 * that looks for the key in every byte the run left behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import {
  type EmulatorOptions,
  type RunningEmulator,
  startEmulator,
} from '../../src/emulator/index.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const BIN = path.join(ROOT, 'bin/ibatch.js');
export const TIME_SCALE = 100;
const MINUTE = 60_000 / TIME_SCALE;
export const LIMITS = `requests=120/${MINUTE}ms,generations=20/${MINUTE}ms,trainings=5/${3_600_000 / TIME_SCALE}ms,uploads=30/${MINUTE}ms`;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

export async function emulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const em = await startEmulator({ seed: 11, timeScale: TIME_SCALE, ...options });
  cleanups.push(() => em.stop());
  return em;
}

export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ibatch-security-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
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
      path.join(ROOT, 'examples/influencer-series/refs', name),
      path.join(dir, 'refs', name),
    );
  }
  const jobPath = path.join(dir, 'job.yaml');
  await writeFile(jobPath, job);
  return jobPath;
}

export interface Spawned {
  readonly child: ChildProcess;
  readonly done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** Spawns `node bin/ibatch.js ...args` with IBATCH_API_KEY; killed after the test if still running. */
export function spawnIbatch(args: readonly string[], apiKey: string, cwd: string): Spawned {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', IBATCH_API_KEY: apiKey },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await done;
    }
  });
  return { child, done };
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

export async function until<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  ms: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}
