/**
 * A run survives faults: with 5xx, connection resets (before and after the
 * server committed), 429 bursts and 10% failed-and-refunded generations
 * injected on every endpoint, a 100-item run finishes; its net spend equals
 * the successful items' cost (each charged once, failures refunded), and no
 * request is sent before an announced Retry-After elapsed.
 */
import { describe, expect, it } from 'vitest';
import { priceOf, type RunningEmulator } from '../../src/emulator/index.js';
import { openJournal } from '../../src/journal/index.js';
import { IN_FLIGHT_MS } from '../chaos/chaos.js';
import { runCliCaptured, testEmulator } from '../helpers/index.js';
import { envFor, ledgerNet, type Workspace, workspace } from './helpers.js';

const SCALE = 60;
const N = 100;
let em: RunningEmulator | undefined;
let ws: Workspace | undefined;

function job(): string {
  const scenes = Array.from({ length: N }, (_, i) => `s${i + 1}`).join(', ');
  return [
    'version: 1',
    'name: faults-100',
    'output: out',
    'generations:',
    '  - id: shots',
    '    model: sdxl-lite',
    '    retries: 4',
    '    matrix:',
    `      scene: [${scenes}]`,
    '    input:',
    '      prompt: "a quiet street, scene {{ scene }}"',
    '',
  ].join('\n');
}

describe('a 100-item run under injected faults', () => {
  it('finishes, charges each successful item once net of refunds, never sends before Retry-After', async () => {
    em = await testEmulator({
      timeScale: SCALE,
      seed: 23,
      latency: { 'sdxl-lite': [3000, 9000] },
      faults: {
        rates: {
          'error-500': 0.02,
          'error-502': 0.02,
          'error-503': 0.02,
          'reset-before': 0.02,
          'reset-after-commit': 0.03,
          'rate-limit-burst': 0.03,
          'generation-fail': 0.1,
        },
      },
    });
    ws = workspace(job());
    const env = envFor(em, SCALE);
    // A fault storm may exhaust the client's bounded retries (exit 4,
    // resumable); the same command resumes. It normally ends in one go.
    let result = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
    for (let resumes = 0; result.code === 4 && resumes < 3; resumes++) {
      result = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
    }
    expect(result.code, result.stderr.slice(-2000)).toBe(0);

    const journal = await openJournal(ws.journalPath, { readonly: true });
    try {
      const [run] = journal.listRuns('faults-100');
      expect(run?.status).toBe('completed');
      const items = journal.listItems(run?.runId ?? '');
      expect(items).toHaveLength(N);
      expect(items.every((i) => i.state === 'succeeded')).toBe(true);
      const retried = items.filter((i) => i.attemptsUsed > 1).length;
      // The failure rate really bit: some items needed another attempt.
      expect(retried).toBeGreaterThan(0);
    } finally {
      journal.close();
    }

    const price = priceOf('sdxl-lite', { input: { prompt: 'x' } } as never).cost;
    expect(await ledgerNet(em)).toBe(N * price);

    const stats = await em.admin.stats();
    const account = stats.accounts.find((a) => a.id === em?.accounts[0]?.id);
    const the429s = stats.faults
      .filter((f) => f.fault.startsWith('rate-limit'))
      .map((f) => Date.parse(f.at));
    expect(the429s.length).toBeGreaterThan(0);
    // Requests already on the wire when a 429 left may arrive after it; any
    // request arriving later than IN_FLIGHT_MS after it was sent knowing of it.
    const sentEarly = (account?.earlyRequests ?? []).filter((e) => {
      const at = Date.parse(e.at);
      const announced = Math.max(-Infinity, ...the429s.filter((t) => t <= at));
      return at - announced > IN_FLIGHT_MS;
    });
    expect(sentEarly).toEqual([]);
  }, 120_000);
});
