/**
 * Item states have one home (src/journal/records.ts): the groups the engine,
 * `status` and the progress display use are derived from it and partition it,
 * and the manifest's statuses are exactly the terminal item states.
 */
import { describe, expect, it } from 'vitest';
import {
  FAILED_ITEM_STATES,
  IN_FLIGHT_ITEM_STATES,
  ITEM_STATE,
  isStateIn,
  OPEN_ATTEMPT_STATES,
  sqlStates,
  TERMINAL_ITEM_STATES,
} from '../../src/journal/index.js';
import { MANIFEST_STATUSES } from '../../src/outputs/index.js';

describe('item states', () => {
  it('are terminal, in flight or pending: each exactly once', () => {
    const grouped = [...TERMINAL_ITEM_STATES, ...IN_FLIGHT_ITEM_STATES, ITEM_STATE.pending];
    expect([...grouped].sort()).toEqual(Object.values(ITEM_STATE).sort());
    expect(new Set(grouped).size).toBe(grouped.length);
  });

  it('has no state the engine never sets', () => {
    expect(Object.values(ITEM_STATE)).not.toContain('waiting');
  });

  it('failed ones are the terminal ones but succeeded', () => {
    expect(TERMINAL_ITEM_STATES.filter((s) => s !== ITEM_STATE.succeeded)).toEqual([
      ...FAILED_ITEM_STATES,
    ]);
  });

  it('the manifest statuses are the terminal item states', () => {
    expect([...MANIFEST_STATUSES].sort()).toEqual([...TERMINAL_ITEM_STATES].sort());
  });

  it('isStateIn and sqlStates', () => {
    expect(isStateIn(FAILED_ITEM_STATES, 'blocked')).toBe(true);
    expect(isStateIn(FAILED_ITEM_STATES, 'succeeded')).toBe(false);
    expect(sqlStates(OPEN_ATTEMPT_STATES)).toBe("'intent', 'submitted'");
  });
});
