import { describe, expect, it } from 'vitest';
import { firstStdoutLine, REPO, spawnCli } from '../helpers/index.js';

// Needs `npm run build` first (it runs dist/cli/main.js).
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
});
