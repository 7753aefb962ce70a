/**
 * examples/library/run.ts runs through the library API (imported as
 * `influencer-batch`, i.e. this package's dist: build first) against the
 * emulator it starts itself.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { cleanEnv, REPO, runCommand, tempDir } from '../helpers/index.js';

interface Summary {
  status: string;
  exitCode: number;
  counts: Record<string, number>;
  spend: { net: number; charged: number };
  planned: number;
  outputDir: string;
  events: Record<string, number>;
}

describe('examples/library/run.ts', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('library');
  });

  it('plans and runs the quickstart job, reporting typed events', async () => {
    const result = await runCommand(
      process.execPath,
      [
        '--import',
        'tsx',
        'examples/library/run.ts',
        '--out',
        path.join(dir, 'out'),
        '--journal',
        path.join(dir, 'journal.db'),
      ],
      { cwd: REPO, env: cleanEnv(), timeoutMs: 90_000 },
    );
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const summary = JSON.parse(lines[0] as string) as Summary;
    expect(summary.status).toBe('completed');
    expect(summary.exitCode).toBe(0);
    expect(summary.counts).toMatchObject({ succeeded: 6, failed: 0, pending: 0 });
    // What the plan quoted is what the run was charged.
    expect(summary.spend.charged).toBe(summary.planned);
    expect(summary.events).toMatchObject({ 'run-started': 1, 'item-done': 6, 'run-finished': 1 });
    expect(summary.events.spend).toBeGreaterThanOrEqual(1);
    expect(summary.events.progress).toBeGreaterThanOrEqual(1);
    expect(result.stderr).toMatch(/succeeded +portraits\//);
    const manifest = readFileSync(path.join(dir, 'out', 'manifest.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(manifest.length).toBeGreaterThanOrEqual(6);
  }, 120_000);
});
