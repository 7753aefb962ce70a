import { request } from 'node:http';
import path from 'node:path';
import { expect } from 'vitest';
import { type Journal, openJournal } from '../../src/journal/index.js';
import { newToken, startReviewServer } from '../../src/review/server/index.js';
import {
  defer,
  emulatorEnv,
  manifestRows,
  runCliCaptured,
  said,
  tempDir,
  testEmulator,
} from '../helpers/index.js';
import { emulators, makeWorkspace, runJobCli } from '../scheduler/fixtures/pipeline/helpers.js';
import { charges, envFor, workspace } from '../scheduler/helpers.js';

export const JOB_NAME = 'pipeline-e2e';

export interface RunDone {
  readonly dir: string;
  readonly job: string;
  readonly out: string;
  readonly journalPath: string;
  readonly env: NodeJS.ProcessEnv;
}

/** A raw request (fetch would normalise `..` and refuse some headers, `Host` among them). */
export function rawRequest(
  base: string,
  target: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: target,
        method: init.method ?? 'GET',
        agent: false,
        headers: init.headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

/** The pipeline job run to the end on a fresh emulator. */
export async function pipelineRun(name: string): Promise<RunDone> {
  const em = await emulators({ seed: 15 });
  const dir = tempDir(name);
  const job = makeWorkspace(dir, 'job.yaml');
  const env = emulatorEnv(em);
  const result = await runJobCli(job, env);
  expect(result.code, result.stdout + result.stderr).toBe(0);
  return {
    dir,
    job,
    out: path.join(dir, 'out'),
    journalPath: path.join(dir, '.ibatch', 'journal.db'),
    env,
  };
}

/** A review server on the run's journal; its base URL (no token) and token. */
export async function reviewServer(
  run: Pick<RunDone, 'journalPath'>,
  reviewer = 'ana',
  jobName = JOB_NAME,
) {
  const journal: Journal = await openJournal(run.journalPath, { job: `${jobName} (review)` });
  const token = newToken();
  const server = await startReviewServer({ journal, jobName, reviewer, token });
  defer(async () => {
    await server.close();
    journal.close();
  });
  const base = `http://127.0.0.1:${server.port}`;
  return { journal, token, base, url: server.url };
}

/** A job of portraits (one per scene) and a clip made from each (`from:`). */
function photosAndClipsJob(name: string, scenes: readonly string[]): string {
  return [
    'version: 1',
    `name: ${name}`,
    'output: out',
    'generations:',
    '  - id: photos',
    '    model: flux-portrait',
    '    matrix:',
    `      scene: [${scenes.join(', ')}]`,
    '    input:',
    '      prompt: "a model on a {{ scene }}"',
    '  - id: clips',
    '    model: kling-i2v',
    '    from: photos',
    '    input:',
    '      prompt: "she turns and smiles"',
    '',
  ].join('\n');
}

/** The fields of a manifest.jsonl row the review tests look at. */
export interface ManifestLine {
  step: string;
  item: string;
  n?: number | null;
  runId: string;
  file?: string;
  generationId: string | null;
  creditsCost: number | null;
  sourceFile?: string;
  sha256?: string;
  current?: boolean;
  review?: string;
  reviewer?: string;
  reviewedAt?: string;
  note?: string;
}

const SCALE = 30;

/**
 * `photosAndClipsJob` run once with the CLI on a fresh emulator (every item
 * charged once); `cli` runs more commands on the same workspace.
 */
export async function photosAndClipsRan(name: string, scenes: readonly string[]) {
  const em = await testEmulator({ timeScale: SCALE });
  const ws = workspace(photosAndClipsJob(name, scenes));
  const env = envFor(em, SCALE);
  const cli = (...args: string[]) => runCliCaptured(args, env, ws.dir);
  const first = await cli('run', ws.jobPath);
  expect(first.code, said(first)).toBe(0);
  expect(await charges(em)).toHaveLength(2 * scenes.length);
  const out = path.join(ws.dir, 'out');
  return { em, ws, cli, out, rows: manifestRows<ManifestLine>(path.join(out, 'manifest.jsonl')) };
}
