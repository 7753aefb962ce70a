/**
 * The one rule for "current" (src/outputs/current.ts): for each item the job
 * file describes now, the rows of its newest success; every other row not
 * current, superseded or retired, with why.
 */
import { describe, expect, it } from 'vitest';
import {
  currentStateOf,
  type ManifestRow,
  markCurrentRows,
  RETIRED_REASON,
  supersededReason,
} from '../../src/outputs/index.js';

const row = (runId: string, item: string, status: ManifestRow['status'] = 'succeeded') =>
  ({ runId, step: 'hero', item, status }) as const;

describe('current, superseded, retired', () => {
  it("an item's newest success is current; older runs are superseded by it; a later failure does not take it", () => {
    const marked = markCurrentRows([
      row('r1', 'a'),
      row('r2', 'a'),
      row('r3', 'a', 'failed'),
      row('r1', 'b', 'failed'),
    ]);
    expect(marked.map((r) => [r.runId, r.item, r.current, r.currentReason])).toEqual([
      ['r1', 'a', false, supersededReason('r2')],
      ['r2', 'a', true, undefined],
      ['r3', 'a', false, supersededReason('r2')],
      // Never succeeded: its newest try is what it has.
      ['r1', 'b', true, undefined],
    ]);
  });

  it('an item the job file no longer describes is retired, whichever run made it', () => {
    const described = new Set(['a']);
    const marked = markCurrentRows(
      [row('r1', 'a'), row('r1', 'gone'), row('r2', 'gone')],
      described,
    );
    expect(marked.map((r) => [r.item, r.current, r.currentReason])).toEqual([
      ['a', true, undefined],
      ['gone', false, RETIRED_REASON],
      ['gone', false, RETIRED_REASON],
    ]);
    expect(marked.map(currentStateOf)).toEqual(['current', 'retired', 'retired']);
  });

  it('a row read back from disk is judged again: an old reason does not stick', () => {
    const stale = { ...row('r1', 'a'), current: false, currentReason: RETIRED_REASON };
    const [marked] = markCurrentRows([stale], new Set(['a']));
    expect(marked).toMatchObject({ current: true });
    expect(marked && 'currentReason' in marked).toBe(false);
  });
});

describe('the rule over many rows (its compact bookkeeping against the rule stated plainly)', () => {
  /** The rule as the module's doc states it, over rows held in memory. */
  function plainly(rows: readonly ReturnType<typeof anyRow>[]) {
    const runsOf = (step: string, item: string) =>
      rows.filter((r) => r.step === step && r.item === item);
    return rows.map((r) => {
      const same = runsOf(r.step, r.item);
      const succeeded = same.filter((s) => s.status === 'succeeded').at(-1);
      const current = (succeeded ?? same.at(-1))?.runId;
      return r.runId === current
        ? { current: true }
        : { current: false, currentReason: supersededReason(current ?? 'another run') };
    });
  }
  const statuses = ['succeeded', 'failed', 'blocked'] as const;
  let seed = 7;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const anyRow = () =>
    ({
      runId: `r${next(40)}`,
      step: next(2) === 0 ? 'hero' : 'clip',
      item: `item-${next(60)}`,
      status: statuses[next(3)] ?? 'failed',
    }) as const;

  it('marks 2,000 rows of 40 runs, two steps and one item name in both, as the plain rule does', () => {
    // Run order (oldest first) as every caller lists them.
    const rows = Array.from({ length: 2000 }, anyRow).sort(
      (a, b) => Number(a.runId.slice(1)) - Number(b.runId.slice(1)),
    );
    const marked = markCurrentRows(rows).map((r) => ({
      current: r.current,
      ...(r.currentReason === undefined ? {} : { currentReason: r.currentReason }),
    }));
    expect(marked).toEqual(plainly(rows));
    expect(marked.filter((m) => m.current).length).toBeGreaterThan(50);
    expect(marked.filter((m) => !m.current).length).toBeGreaterThan(500);
  });
});
