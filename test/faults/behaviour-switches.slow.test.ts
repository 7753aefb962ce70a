/**
 * Where the service reference says "not shown", the emulator has a switch
 * (docs/emulator.md). The README's quickstart job (4 images, then 4 clips
 * `from:` them) must still run to the documented outcome under each one.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Behaviour, FaultScript } from '../../src/emulator/index.js';
import { repoPath, said } from '../helpers/index.js';
import { freshCase } from './harness.js';

const QUICKSTART = readFileSync(repoPath('jobs', 'quickstart.yaml'), 'utf8');
/** 4 image copies (2 creates x 8) + 4 clips x 30 credits. */
const QUICKSTART_NET = 2 * 8 + 4 * 30;

async function quickstart(behaviour: Partial<Behaviour>, scripts: FaultScript[] = []) {
  const fc = await freshCase({ job: QUICKSTART, emulator: { timeScale: 100, behaviour }, scripts });
  const result = await fc.run();
  const net = await fc.expectNoDoubleCharge();
  const total = [...net.values()].reduce((a, b) => a + b, 0);
  return { fc, result, total };
}

describe('the quickstart job succeeds under every "not shown" switch', () => {
  it.each<[string, Partial<Behaviour>]>([
    ['poll status strings UPPER case', { statusCase: 'upper' }],
    ['poll status strings Title case', { statusCase: 'title' }],
    ['history status strings UPPER case', { historyStatusCase: 'upper' }],
    ['history status strings lower case', { historyStatusCase: 'lower' }],
    [
      'history limit clamped, small default',
      { historyLimitOutOfRange: 'clamp', historyDefaultLimit: 2 },
    ],
    ['enum options as bare values', { optionShape: 'bare' }],
    ['fixed-window rate limiting', { rateLimitAlgorithm: 'fixed' }],
    ['preview resolves references', { previewChecksReferences: true }],
  ])('%s', async (_name, behaviour) => {
    const { fc, result, total } = await quickstart(behaviour);
    expect(result.code, said(result)).toBe(0);
    expect(result.stdout).toContain('finished: 6 item(s) succeeded');
    expect(total).toBe(QUICKSTART_NET);
    const manifest = await fc.manifest();
    expect(manifest).toHaveLength(8);
    expect(manifest.every((row) => row.status === 'succeeded' && row.file)).toBe(true);
  });

  it('replays answered 200 (with a reset after commit so a replay happens)', async () => {
    const { fc, result, total } = await quickstart({ replayStatus: 200 }, [
      { endpoint: 'createGeneration', fault: 'reset-after-commit', times: 3 },
    ]);
    expect(result.code, said(result)).toBe(0);
    expect((await fc.facts()).counters.replays).toBe(3);
    expect(total).toBe(QUICKSTART_NET);
  });
});

describe('safety block styles', () => {
  const blockFirstCreate: FaultScript[] = [{ endpoint: 'createGeneration', fault: 'safety-block' }];

  it.each<[Behaviour['safetyBlock']]>([['blocked'], ['success-no-url']])(
    '%s: the item is blocked (charged, not retried), its clips skipped, exit 1',
    async (safetyBlock) => {
      const { fc, result, total } = await quickstart({ safetyBlock }, blockFirstCreate);
      expect(result.code, said(result)).toBe(1);
      expect(result.stdout).toContain('3 succeeded, 0 failed, 1 blocked, 2 skipped');
      expect(result.stderr).toMatch(/blocked by the safety filter/);
      // The blocked create stays charged (8); its two clips were never created.
      expect(total).toBe(QUICKSTART_NET - 2 * 30);
      const manifest = await fc.manifest();
      const blocked = manifest.filter((row) => row.status === 'blocked');
      expect(blocked).toHaveLength(1);
      expect(blocked[0]?.file ?? null).toBeNull();
      expect(String(blocked[0]?.error)).toMatch(/safety/);
    },
  );

  it('refunded (status failed + refund): retried with a new key, exit 0, paid once net', async () => {
    const { fc, result, total } = await quickstart({ safetyBlock: 'refunded' }, blockFirstCreate);
    expect(result.code, said(result)).toBe(0);
    expect(result.stderr).toMatch(/retrying \(attempt 2/);
    expect(result.stdout).toMatch(/8 refunded/);
    expect(total).toBe(QUICKSTART_NET);
    expect((await fc.ledger()).filter((e) => e.type === 'refund')).toHaveLength(2);
  });
});
