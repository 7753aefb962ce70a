/**
 * `ibatch account|models|influencers` in-process (runCli, no build needed),
 * against the in-process emulator (`--emulator`) and a started one (`--base-url`).
 */

import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { runCliCaptured, testEmulator } from '../helpers/index.js';

function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  return runCliCaptured(args, env, process.cwd());
}

let emulator: RunningEmulator;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  emulator = await testEmulator({ seed: 5 });
  env = { IBATCH_BASE_URL: emulator.baseUrl, IBATCH_API_KEY: emulator.accounts[0]!.apiKey };
});

describe('--json prints the service objects as returned', () => {
  it('account', async () => {
    const { code, stdout } = await cli(['account', '--json'], env);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      credits: emulator.accounts[0]!.credits,
      plan: expect.any(String),
    });
  });

  it('models and models ID', async () => {
    const list = await cli(['models', '--json'], env);
    expect(list.code).toBe(0);
    const { models } = JSON.parse(list.stdout) as { models: { id: string }[] };
    expect(models.length).toBeGreaterThan(3);
    const one = await cli(['models', models[0]!.id, '--json'], env);
    expect(JSON.parse(one.stdout)).toMatchObject({ model: { id: models[0]!.id } });
  });

  it('influencers, with --emulator', async () => {
    const { code, stdout } = await cli(['influencers', '--json', '--emulator'], {});
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      total: expect.any(Number),
      characters: expect.any(Array),
    });
  });
});

describe('readable output', () => {
  it('tables without colour when not a TTY', async () => {
    const { code, stdout } = await cli(['models'], { ...env, NO_COLOR: '' });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ID\s+KIND\s+VENDOR\s+LABEL\n/);
    expect(stdout).toContain('flux-portrait');
    expect(stdout).not.toContain('\x1b[');
    const one = await cli(['models', 'flux-portrait'], env);
    expect(one.stdout).toMatch(/FIELD\s+TYPE\s+REQUIRED/);
    expect(one.stdout).toMatch(/prompt\s+text\s+yes/);
    const account = await cli(['account'], env);
    expect(account.stdout).toMatch(/credits\s+\d+/);
  });
});

describe('exit codes', () => {
  it('an unknown model id exits 2', async () => {
    const { code, stderr } = await cli(['models', 'no-such-model'], env);
    expect(code).toBe(2);
    expect(stderr).toContain('unknown model `no-such-model`');
  });

  it('a missing base URL or key exits 2', async () => {
    expect((await cli(['account'], {})).code).toBe(2);
    expect((await cli(['account'], { IBATCH_BASE_URL: emulator.baseUrl })).code).toBe(2);
  });

  it('a non-https remote base URL exits 2 before any connection', async () => {
    const { code, stderr } = await cli(
      ['account', '--base-url', 'http://example.invalid/api/v1'],
      env,
    );
    expect(code).toBe(2);
    expect(stderr).toContain('https');
  });

  it('a refused key exits 5 and is not printed', async () => {
    const key = 'ifk_live_refused_key_for_cli_test';
    const { code, stderr } = await cli(['account'], { ...env, IBATCH_API_KEY: key });
    expect(code).toBe(5);
    expect(stderr).toContain('IBATCH_API_KEY');
    expect(stderr).not.toContain(key);
  });
});
