/**
 * Small errors: messages say what was being done in words
 * ("creating a generation on MODEL"), not the client's function names
 * (`createGeneration:`), which stay on the error and in the JSON logs; a base
 * URL without /api/v1 gets the URL it probably meant; stops, budget stops and
 * blocked items are logged at warn, not info. The real CLI in process against
 * a real emulator over loopback HTTP.
 */
import { describe, expect, it } from 'vitest';
import { ApiError, createClient } from '../../src/api/index.js';
import {
  emulatorEnv,
  expectNoStack,
  jsonLogs,
  runCliCaptured,
  said,
  tempDir,
  testEmulator,
} from '../helpers/index.js';
import { envFor, imageJob, workspace } from '../scheduler/helpers.js';

const FUNCTION_NAMES = /\b(getAccount|listModels|getModel|previewCredits|createGeneration):/;

const WARN = 40;
const INFO = 30;

describe('messages say what was being done', () => {
  it('a base URL without /api/v1: the 404 says which URL was probably meant', async () => {
    const em = await testEmulator();
    const origin = new URL(em.baseUrl).origin;
    const env = { ...emulatorEnv(em), IBATCH_BASE_URL: origin };
    const result = await runCliCaptured(['models'], env, tempDir('msg'));
    expect(result.code).not.toBe(0);
    expectNoStack(result.stderr);
    expect(said(result)).toContain('ibatch: listing the models: the service rejected the request');
    expect(said(result)).toContain(`did you mean ${origin}/api/v1?`);
    expect(said(result)).not.toMatch(FUNCTION_NAMES);
  });

  it('a refused key: "reading the account", exit 5', async () => {
    const em = await testEmulator();
    const env = { ...emulatorEnv(em), IBATCH_API_KEY: 'ifk_live_not-a-key' };
    const result = await runCliCaptured(['account'], env, tempDir('msg'));
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(/^ibatch: reading the account: the service refused the API key/);
    expect(said(result)).not.toMatch(FUNCTION_NAMES);
  });

  it('a rejected create or quote names the model; the endpoint stays on the error', async () => {
    const em = await testEmulator();
    const client = createClient({ baseUrl: em.baseUrl, apiKey: em.accounts[0]?.apiKey ?? '' });
    const bad = { input: { prompt: 'x', aspectRatio: 'no-such-ratio' } };
    const create = await client
      .createGeneration('sdxl-lite', bad, { idempotencyKey: 'msg-test-1' })
      .catch((e: unknown) => e);
    const quote = await client.previewCredits('sdxl-lite', bad).catch((e: unknown) => e);
    await client.close();
    expect(create).toBeInstanceOf(ApiError);
    expect(create).toMatchObject({ endpoint: 'createGeneration', status: 400 });
    expect((create as Error).message).toMatch(/^creating a generation on sdxl-lite: the service/);
    expect(quote).toMatchObject({ endpoint: 'previewCredits' });
    expect((quote as Error).message).toMatch(/^quoting a generation on sdxl-lite: the service/);
  });
});

describe('what a person must not miss is logged at warn', () => {
  it('a budget stop: the stop and the run that ended short, at warn', async () => {
    const em = await testEmulator({ timeScale: 50 });
    const ws = workspace(imageJob({ name: 'warn-budget', n: 6, budget: 5 }));
    const result = await runCliCaptured(['run', ws.jobPath], envFor(em, 50), ws.dir);
    expect(result.code, result.stderr).toBe(3);
    const logs = jsonLogs(result.stderr);
    const levelOf = (event: string) => logs.find((l) => l.event === event)?.level;
    expect(levelOf('run.stopping')).toBe(WARN);
    expect(levelOf('run.finished')).toBe(WARN);
    expect(levelOf('item.succeeded')).toBe(INFO);
    expect(levelOf('run.started')).toBe(INFO);
  });

  it('a blocked item at warn; a run that completes at info', async () => {
    const em = await testEmulator({ timeScale: 50 });
    await em.admin.setFaults({ rates: { 'safety-block': 1 } });
    const ws = workspace(imageJob({ name: 'warn-blocked', n: 2 }));
    const blocked = await runCliCaptured(['run', ws.jobPath], envFor(em, 50), ws.dir);
    expect(blocked.code, blocked.stderr).toBe(1);
    const logs = jsonLogs(blocked.stderr);
    expect(logs.filter((l) => l.event === 'item.blocked').map((l) => l.level)).toEqual([
      WARN,
      WARN,
    ]);
    await em.admin.setFaults({ rates: {} });
    const ok = workspace(imageJob({ name: 'warn-ok', n: 2 }));
    const done = await runCliCaptured(['run', ok.jobPath], envFor(em, 50), ok.dir);
    expect(done.code, done.stderr).toBe(0);
    expect(jsonLogs(done.stderr).find((l) => l.event === 'run.finished')?.level).toBe(INFO);
  });
});
