/**
 * A run whose `budget` is below the total stops at
 * or under it with exit 3 and resumes the same run once the budget is raised;
 * a 402 mid-run (the account runs dry) exits 3 with the balance and
 * purchaseUrl and resumes after a top-up. The ledger shows each item charged
 * exactly once, at the emulator's price.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { priceOf, type RunningEmulator } from '../../src/emulator/index.js';
import { openJournal } from '../../src/journal/index.js';
import { runCliCaptured, testEmulator } from '../helpers/index.js';
import {
  charges,
  chargesPerItem,
  envFor,
  imageJob,
  ledgerNet,
  type Workspace,
  workspace,
} from './helpers.js';

const SCALE = 30;
const N = 8;
let em: RunningEmulator;
let ws: Workspace;

beforeEach(async () => {
  em = await testEmulator({ timeScale: SCALE });
});

function itemPrice(): number {
  return priceOf('sdxl-lite', { input: { prompt: 'x' } } as never).cost;
}

async function runIds(journalPath: string): Promise<string[]> {
  const journal = await openJournal(journalPath, { readonly: true });
  try {
    return journal.listRuns().map((r) => r.runId);
  } finally {
    journal.close();
  }
}

describe('budget', () => {
  it('stops at or under the budget with exit 3, then resumes the same run after raising it', async () => {
    const price = itemPrice();
    expect(price).toBeGreaterThan(0);
    const budget = Math.floor(price * 3.5); // room for 3 items, not 4
    ws = workspace(imageJob({ name: 'budget-job', n: N, budget }));
    const env = envFor(em, SCALE);

    const first = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
    expect(first.code, first.stderr).toBe(3);
    expect(first.stdout).toMatch(/budget/i);
    const net1 = await ledgerNet(em);
    expect(net1).toBeLessThanOrEqual(budget);
    expect(net1).toBeGreaterThan(0);
    const [runId] = await runIds(ws.journalPath);

    ws.write(imageJob({ name: 'budget-job', n: N, budget: price * N + 10 }));
    const second = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
    expect(second.code, second.stderr + second.stdout).toBe(0);
    expect(second.stdout).toContain(`run ${runId}`);
    expect(await runIds(ws.journalPath)).toEqual([runId]);

    const entries = await charges(em);
    expect(entries).toHaveLength(N);
    expect([...chargesPerItem(entries).values()].every((n) => n === 1)).toBe(true);
    expect(chargesPerItem(entries).size).toBe(N);
    expect(await ledgerNet(em)).toBe(price * N);
  }, 60_000);

  it('a 402 mid-run exits 3 with the balance and purchaseUrl; after a top-up it resumes without double charges', async () => {
    const price = itemPrice();
    ws = workspace(imageJob({ name: 'dry-account', n: N }));
    const env = envFor(em, SCALE);
    const account = em.accounts[0]!;
    const dry = price * 3 + price / 2; // three creates pass, the fourth gets 402
    await em.admin.setCredits(account.id, dry);

    const first = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
    expect(first.code, first.stderr).toBe(3);
    const said = first.stdout + first.stderr;
    expect(said).toMatch(/balance/i);
    expect(said).toMatch(/https?:\/\/\S+/); // the purchaseUrl
    expect(said).toContain(String(dry - price * 3));
    expect(await charges(em)).toHaveLength(3);
    const [runId] = await runIds(ws.journalPath);

    await em.admin.setCredits(account.id, 10_000);
    const second = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
    expect(second.code, second.stderr + second.stdout).toBe(0);
    expect(second.stdout).toContain(`run ${runId}`);
    const entries = await charges(em);
    expect(entries).toHaveLength(N);
    expect(chargesPerItem(entries).size).toBe(N);
    expect(entries.reduce((s, e) => s + e.amount, 0)).toBe(price * N);
  }, 60_000);
});
