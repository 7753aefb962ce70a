/** Test helpers for job files: a captured CLI io, temp copies of fixtures, emulator models. */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { CliIo } from '../../src/cli/command.js';
import { runCli } from '../../src/cli/main.js';
import type { Model } from '../../src/contract/index.js';
import { EMULATOR_MODELS } from '../../src/emulator/index.js';
import { catalogOf, type ModelCatalog } from '../../src/job/index.js';

export interface CapturedRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function sink(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

export async function runIbatch(
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<CapturedRun> {
  const out = sink();
  const err = sink();
  const io: CliIo = {
    stdout: out.stream,
    stderr: err.stream,
    env: options.env ?? {},
    cwd: options.cwd,
    exitCode: 0,
  };
  const code = await runCli(args, io);
  return { code, stdout: out.text(), stderr: err.text() };
}

/** Copies a fixture folder into a fresh temp dir (tests write caches beside job files). */
export function tempCopy(from: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'ibatch-job-'));
  cpSync(from, dir, { recursive: true });
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'ibatch-job-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The emulator's models as GET /models serves them (plain data, no server). */
export function emulatorCatalog(): ModelCatalog {
  const models = EMULATOR_MODELS.map(({ pricing: _p, latencyMs: _l, ...rest }) => ({
    ...rest,
    fields: rest.fields.map(({ integer: _i, exclude: _e, ...field }) => field),
  })) as Model[];
  return catalogOf(models);
}
