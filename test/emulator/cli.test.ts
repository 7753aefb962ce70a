import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/ibatch.js', import.meta.url));

// Needs `npm run build` first (it runs dist/cli/main.js).
describe('ibatch emulator (CLI)', () => {
  it('prints one JSON line, serves /account, exits 0 on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'emulator', '--port', '0', '--json', '--seed', '3'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    try {
      const lines = createInterface({ input: child.stdout });
      const [line] = (await once(lines, 'line')) as [string];
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
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      expect(code, stderr).toBe(0);
      expect(stderr).not.toContain(facts.accounts[0]!.apiKey);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
