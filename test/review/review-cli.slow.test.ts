/**
 * `ibatch review` as a user runs it: the real process prints the page's
 * address (loopback, a token), serves it until Ctrl-C and exits 0; another
 * host is refused (exit 2) without --unsafe-host; `--json` lists the
 * outputs and exits. The API key in the environment never reaches any
 * response (the server never needs it).
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ReviewListing } from '../../src/review/server/index.js';
import {
  expectNoStack,
  firstStdoutLine,
  runCliCaptured,
  said,
  spawnCli,
} from '../helpers/index.js';
import { pipelineRun, type RunDone } from './helpers.js';

let run: RunDone;
beforeAll(async () => {
  run = await pipelineRun('review-cli');
}, 120_000);

describe('ibatch review', () => {
  it('--json prints every current output with its review state and exits', async () => {
    const result = await runCliCaptured(['review', run.job, '--json'], {}, run.dir);
    expect(result.code, said(result)).toBe(0);
    const listing = JSON.parse(result.stdout) as ReviewListing;
    expect(listing.jobName).toBe('pipeline-e2e');
    expect(listing.outputDir).toBe(run.out);
    expect(listing.outputs.map((o) => [o.step, o.review]).sort()).toEqual([
      ['clips', 'unreviewed'],
      ['clips', 'unreviewed'],
      ['photos', 'unreviewed'],
      ['photos', 'unreviewed'],
    ]);
    for (const photo of listing.outputs.filter((o) => o.step === 'photos')) {
      expect(photo.dependants).toHaveLength(1);
    }
    expect(listing.spend.total.charged).toBeGreaterThan(0);
  });

  it('refuses a host other machines can reach without --unsafe-host (exit 2)', async () => {
    const result = await runCliCaptured(['review', run.job, '--host', '0.0.0.0'], {}, run.dir);
    expect(result.code).toBe(2);
    expect(said(result)).toMatch(/--unsafe-host/);
    expectNoStack(result.stderr);
  });

  it('serves on loopback with a token until SIGINT, exits 0, and never answers the API key', async () => {
    const apiKey = run.env.IBATCH_API_KEY ?? '';
    expect(apiKey.length).toBeGreaterThan(8);
    const child = spawnCli(['review', path.basename(run.job), '--reviewer', 'ana'], {
      cwd: run.dir,
      env: run.env,
    });
    const url = new URL(await firstStdoutLine(child));
    expect(url.hostname).toBe('127.0.0.1');
    const token = url.searchParams.get('token') ?? '';
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const headers = { 'X-Ibatch-Token': token };
    const bodies: string[] = [];
    const page = await fetch(url);
    expect(page.status).toBe(200);
    bodies.push(await page.text());
    const api = await fetch(new URL('/api/outputs', url), { headers });
    const text = await api.text();
    bodies.push(text);
    for (const o of (JSON.parse(text) as ReviewListing).outputs) {
      const file = await fetch(new URL(`/files/${o.file}`, url), { headers });
      expect(file.status).toBe(200);
      bodies.push(Buffer.from(await file.arrayBuffer()).toString('latin1'));
    }
    for (const body of bodies) expect(body).not.toContain(apiKey);
    expect((await fetch(new URL('/api/outputs', url.origin))).status).toBe(401);

    child.child.kill('SIGINT');
    const exit = await child.exited;
    expect(exit.code, exit.stderr).toBe(0);
  });
});
