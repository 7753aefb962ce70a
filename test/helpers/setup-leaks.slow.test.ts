/**
 * The leak check itself: vitest runs fixture files (fixtures/leaks/) that
 * leak a server, an interval and a child process, and one that closes all it
 * opens; each leaky file must fail naming what it leaked, the clean one pass.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, repoPath, runCommand, tempDir } from './index.js';

interface JsonReport {
  testResults: Array<{ name: string; status: string; message: string }>;
}

describe('setup-leaks.ts', () => {
  it('fails the files that leak a server, a timer or a child, naming each; passes a clean file', async () => {
    const report = path.join(tempDir('leaks'), 'report.json');
    const run = await runCommand(
      process.execPath,
      [
        repoPath('node_modules', 'vitest', 'vitest.mjs'),
        'run',
        '--config',
        repoPath('test', 'helpers', 'fixtures', 'leaks', 'vitest.config.ts'),
        '--reporter=json',
        `--outputFile=${report}`,
      ],
      { cwd: REPO, timeoutMs: 60_000 },
    );
    expect(run.code, run.stderr).toBe(1);
    const results = (JSON.parse(readFileSync(report, 'utf8')) as JsonReport).testResults;
    const byFile = Object.fromEntries(results.map((r) => [path.basename(r.name), r]));
    expect(Object.keys(byFile).sort()).toEqual([
      'clean.fixture.ts',
      'leaks-child.fixture.ts',
      'leaks-server.fixture.ts',
      'leaks-timer.fixture.ts',
    ]);
    expect(byFile['clean.fixture.ts']?.status).toBe('passed');
    const server = byFile['leaks-server.fixture.ts'];
    expect(server?.status).toBe('failed');
    expect(server?.message).toMatch(/leaked open handles.*TCPServerWrap x1/);
    expect(server?.message).toMatch(/Server listening on 127\.0\.0\.1:\d+/);
    const timer = byFile['leaks-timer.fixture.ts'];
    expect(timer?.status).toBe('failed');
    expect(timer?.message).toContain('setInterval (1000 ms)');
    const child = byFile['leaks-child.fixture.ts'];
    expect(child?.status).toBe('failed');
    expect(child?.message).toMatch(/ProcessWrap x1/);
    expect(child?.message).toMatch(/ChildProcess pid \d+ \(.*node -e/);
  }, 90_000);
});
