import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { expectNoStack, firstStdoutLine, REPO, spawnCli } from '../helpers/index.js';

// Needs `npm run build` first (it runs the built CLI, dist/bundle/).
describe('ibatch emulator (CLI)', () => {
  it('prints one JSON line, serves /account, exits 0 on SIGTERM', async () => {
    const run = spawnCli(['emulator', '--port', '0', '--json', '--seed', '3'], { cwd: REPO });
    const line = await firstStdoutLine(run);
    const facts = JSON.parse(line) as {
      baseUrl: string;
      adminUrl: string;
      accounts: Array<{ apiKey: string; credits: number }>;
    };
    expect(facts.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
    expect(facts.accounts.length).toBeGreaterThanOrEqual(2);
    expect(facts.accounts[0]!.credits).toBeGreaterThanOrEqual(10_000);
    const account = await fetch(`${facts.baseUrl}/account`, {
      headers: { authorization: `Bearer ${facts.accounts[0]!.apiKey}` },
    });
    expect(account.status).toBe(200);
    run.child.kill('SIGTERM');
    const { code, stderr } = await run.exited;
    expect(code, stderr).toBe(0);
    expect(stderr).not.toContain(facts.accounts[0]!.apiKey);
  });

  it('a busy --port is exit 2 with one line naming the port, no stack', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      const port = (holder.address() as { port: number }).port;
      const { code, stderr } = await spawnCli(['emulator', '--port', String(port)], { cwd: REPO })
        .exited;
      expect(code).toBe(2);
      expect(stderr.trim()).toBe(
        `ibatch: --port ${port} is already in use on 127.0.0.1: pick another port, or 0 for a free one`,
      );
      expectNoStack(stderr);
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });
});
