/**
 * The fault matrix: each case runs `ibatch run` (in-process, with
 * --base-url and scaled --limits) against a FRESH emulator whose faults are
 * scripted, then checks the exit code, the ledger (no double charge), and the
 * words a user reads. Stalls and 5xx storms need small client timeouts and
 * backoff, so they live in engine-timeouts.slow.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { FaultKind } from '../../src/emulator/index.js';
import { type CliResult, said, until } from '../helpers/index.js';
import { freshCase, ONE_IMAGE_JOB, TWO_IMAGES_JOB } from './harness.js';

function expectAllSucceeded(result: CliResult, items = 2): void {
  expect(result.code, said(result)).toBe(0);
  expect(result.stdout).toContain(`finished: ${items} item(s) succeeded`);
}

describe('transient faults are absorbed: exit 0, each item charged once', () => {
  it.each([
    ['rate-limit-burst', '429 with Retry-After'],
    ['rate-limit-no-header', '429 without Retry-After'],
  ] as const)(
    '%s (%s) on a create and a poll: waits, never sends early, succeeds',
    async (fault, _what) => {
      // One item, so no other request is already in flight when the 429 leaves
      // the server: any request the emulator sees before Retry-After is ours to blame.
      // The poll is the history poll: a single-copy image completes from it
      // without a read by id (docs/polling.md).
      const fc = await freshCase({
        job: ONE_IMAGE_JOB,
        scripts: [
          { endpoint: 'createGeneration', fault },
          { endpoint: 'listGenerations', fault },
        ],
      });
      const result = await fc.run();
      expectAllSucceeded(result, 1);
      const facts = await fc.facts();
      expect(facts.injected).toContain(`${fault}@createGeneration`);
      expect(facts.injected).toContain(`${fault}@listGenerations`);
      expect(facts.earlyRequests).toBe(0);
      expect(result.stderr).toMatch(/rate limited: waiting until/);
      const net = await fc.expectNoDoubleCharge();
      expect([...net.values()]).toEqual([4]);
    },
  );

  it.each(['error-500', 'error-502', 'error-503'] as const)(
    '%s on a create and on a poll: retried with the same key',
    async (fault: FaultKind) => {
      const fc = await freshCase({
        scripts: [
          { endpoint: 'createGeneration', fault },
          { endpoint: 'getImage', fault },
          { endpoint: 'listGenerations', fault },
        ],
      });
      const result = await fc.run();
      expectAllSucceeded(result);
      const facts = await fc.facts();
      expect(facts.injected).toContain(`${fault}@createGeneration`);
      // 5xx means nothing was done: the retry is a first create, not a replay.
      expect(facts.counters).toMatchObject({ creates: 2, replays: 0 });
      const net = await fc.expectNoDoubleCharge();
      expect([...net.values()]).toEqual([4, 4]);
    },
  );

  it('connection reset BEFORE the service committed a create: resent, charged once', async () => {
    const fc = await freshCase({
      scripts: [{ endpoint: 'createGeneration', fault: 'reset-before', times: 2 }],
    });
    const result = await fc.run();
    expectAllSucceeded(result);
    const facts = await fc.facts();
    expect(facts.pendingScripts).toBe(0);
    expect(facts.counters).toMatchObject({ creates: 2, replays: 0 });
    expect([...(await fc.expectNoDoubleCharge()).values()]).toEqual([4, 4]);
  });

  it('connection reset AFTER the service committed a create: the replay is recognised', async () => {
    const fc = await freshCase({
      scripts: [{ endpoint: 'createGeneration', fault: 'reset-after-commit' }],
    });
    const result = await fc.run();
    expectAllSucceeded(result);
    const facts = await fc.facts();
    expect(facts.injected).toEqual(['reset-after-commit@createGeneration']);
    expect(facts.counters).toMatchObject({ creates: 2, replays: 1 });
    expect(await fc.ledger()).toHaveLength(2);
    expect([...(await fc.expectNoDoubleCharge()).values()]).toEqual([4, 4]);
  });

  it('a replay answered 200 instead of 202 (behaviour.replayStatus) after a reset-after-commit', async () => {
    const fc = await freshCase({
      emulator: { behaviour: { replayStatus: 200 } },
      scripts: [{ endpoint: 'createGeneration', fault: 'reset-after-commit', times: 2 }],
    });
    const result = await fc.run();
    expectAllSucceeded(result);
    const facts = await fc.facts();
    expect(facts.pendingScripts).toBe(0);
    expect(facts.counters.replays).toBe(2);
    expect(await fc.ledger()).toHaveLength(2);
    expect([...(await fc.expectNoDoubleCharge()).values()]).toEqual([4, 4]);
    const manifest = await fc.manifest();
    expect(manifest.map((row) => row.status)).toEqual(['succeeded', 'succeeded']);
  });

  it('unknown status strings (RUNNING, Succeeded...) on polls: terminal/ready flags are trusted', async () => {
    const fc = await freshCase({ scripts: [{ fault: 'unknown-status', times: 6 }] });
    const result = await fc.run();
    expectAllSucceeded(result);
    const facts = await fc.facts();
    expect(facts.injected.filter((f) => f.startsWith('unknown-status@')).length).toBeGreaterThan(0);
    expect([...(await fc.expectNoDoubleCharge()).values()]).toEqual([4, 4]);
  });
});

describe('contract breaks stop the run resumably (exit 4) and the resume pays nothing twice', () => {
  it.each([
    ['malformed-json', /breaks the contract: malformed JSON/],
    ['missing-field', /breaks the contract at `ids`/],
  ] as const)('%s on a committed create', async (fault, words) => {
    const fc = await freshCase({ scripts: [{ endpoint: 'createGeneration', fault }] });
    const first = await fc.run();
    expect(first.code, said(first)).toBe(4);
    expect(first.stdout).toMatch(words);
    expect(first.stdout).toContain('Run again to resume');
    // The service did charge; the journal holds the intents, so the resume replays.
    expect(await fc.ledger()).toHaveLength(2);

    const second = await fc.run();
    expectAllSucceeded(second);
    expect(second.stderr).toContain('resumed run');
    expect((await fc.facts()).counters.replays).toBeGreaterThan(0);
    expect(await fc.ledger()).toHaveLength(2);
    expect([...(await fc.expectNoDoubleCharge()).values()]).toEqual([4, 4]);
  });

  it('missing `terminal`/`generations` on polls: a typed contract error naming the field, resumable', async () => {
    const fc = await freshCase({
      scripts: [
        { endpoint: 'getImage', fault: 'missing-field' },
        { endpoint: 'listGenerations', fault: 'missing-field' },
      ],
    });
    // Each scripted poll fault may stop one run; every stop must be exit 4 and
    // name the field, and a rerun resumes.
    let result = await fc.run();
    for (let runs = 1; result.code === 4 && runs < 4; runs++) {
      expect(result.stdout).toMatch(/breaks the contract at `(terminal|generations)`/);
      expect(result.stdout).toContain('Run again to resume');
      result = await fc.run();
    }
    expectAllSucceeded(result);
    expect((await fc.facts()).injected.some((f) => f.startsWith('missing-field@'))).toBe(true);
    expect(await fc.ledger()).toHaveLength(2);
    expect([...(await fc.expectNoDoubleCharge()).values()]).toEqual([4, 4]);
  });
});

describe('items and runs that end badly say so, with the right exit code', () => {
  it('a generation that never becomes terminal fails after the step timeout (exit 1)', async () => {
    const fc = await freshCase({
      job: `${TWO_IMAGES_JOB}    timeout: 2s\n`,
      scripts: [{ endpoint: 'createGeneration', fault: 'never-terminal' }],
    });
    const started = Date.now();
    const result = await fc.run();
    expect(result.code, said(result)).toBe(1);
    // It waited out the 2 s step timeout (a run that never gave up fails at the test's timeout).
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(result.stdout).toContain('1 succeeded, 1 failed');
    expect(result.stderr).toMatch(/did not finish before its deadline/);
    const manifest = await fc.manifest();
    const failed = manifest.filter((row) => row.status !== 'succeeded');
    expect(failed).toHaveLength(1);
    expect(String(failed[0]?.error)).toMatch(/deadline/);
    expect(failed[0]?.file ?? null).toBeNull();
    // Charged once, never re-created behind the user's back.
    expect(await fc.ledger()).toHaveLength(2);
    await fc.expectNoDoubleCharge();
  });

  it('402 mid-run stops with exit 3; after a top-up the run resumes without double charge', async () => {
    // Enough for one image (4 credits), not for two.
    const fc = await freshCase({ emulator: { accounts: [{ credits: 4 }, {}] } });
    const first = await fc.run();
    expect(first.code, said(first)).toBe(3);
    expect(first.stdout).toMatch(/not enough credits/);
    expect(first.stdout).toMatch(/top up/);
    expect(first.stdout).toMatch(/run again to resume/i);
    expect(first.stdout).toContain('1 succeeded');
    expect(await fc.ledger()).toHaveLength(1);

    await fc.em.admin.setCredits(fc.account.id, 1000);
    const second = await fc.run();
    expectAllSucceeded(second);
    expect(second.stderr).toContain('resumed run');
    expect(await fc.ledger()).toHaveLength(2);
    expect([...(await fc.expectNoDoubleCharge()).values()]).toEqual([4, 4]);
  });

  it('a key revoked mid-run stops with exit 5; with a new valid key the run resumes, no double charge', async () => {
    // Slow generations (400 ms at this scale) so the revocation lands mid-run.
    const fc = await freshCase({ emulator: { latency: { 'flux-portrait': [20_000, 20_000] } } });
    const running = fc.run();
    await until(async () => (await fc.ledger()).length > 0, {
      timeoutMs: 10_000,
      what: 'a create to reach the emulator',
      everyMs: 10,
    });
    await fc.em.admin.revokeKey(fc.account.apiKey);
    const first = await running;
    expect(first.code, said(first)).toBe(5);
    expect(first.stdout).toMatch(/refused the API key/);
    expect(first.stdout).toContain('IBATCH_API_KEY');
    expect(said(first)).not.toContain(fc.account.apiKey);
    expect(first.stdout).toMatch(/[1-9]\d* pending/);

    const { apiKey } = await fc.em.admin.issueKey(fc.account.id);
    const second = await fc.run({ apiKey });
    expectAllSucceeded(second);
    expect(second.stderr).toContain('resumed run');
    expect(said(second)).not.toContain(apiKey);
    expect([...(await fc.expectNoDoubleCharge()).values()]).toEqual([4, 4]);
  });
});
