import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { idempotencyKey, newRunId } from '../../src/journal/index.js';

const parts = {
  jobName: 'Spring Launch',
  runId: '20260105-143012-123-k3f9a2',
  stepId: 'portraits',
  itemKey: 'scene=beach/#1',
  attempt: 1,
};

describe('idempotencyKey', () => {
  it('is deterministic, readable and differs per attempt', () => {
    const key = idempotencyKey(parts);
    expect(key).toBe(idempotencyKey({ ...parts }));
    expect(key).toMatch(
      /^ib1-spring-launch-20260105-143012-123-k3f9a2-portraits-scene-beach-1-a1-[0-9a-f]{32}$/,
    );
    expect(idempotencyKey({ ...parts, attempt: 2 })).not.toBe(key);
  });

  it('stays short, safe and unique for any input', () => {
    const text = fc.string({ maxLength: 400 });
    fc.assert(
      fc.property(
        text,
        text,
        text,
        text,
        fc.integer({ min: 1, max: 1000 }),
        (jobName, runId, stepId, itemKey, attempt) => {
          const key = idempotencyKey({ jobName, runId, stepId, itemKey, attempt });
          expect(key.length).toBeLessThanOrEqual(200);
          expect(key).toMatch(/^[a-z0-9._-]+$/);
          // Slugs collide ("a b" vs "a-b"); the hash keeps the keys apart.
          expect(
            idempotencyKey({ jobName, runId, stepId, itemKey: `${itemKey} `, attempt }),
          ).not.toBe(key);
        },
      ),
    );
  });

  it('refuses a non-positive attempt', () => {
    expect(() => idempotencyKey({ ...parts, attempt: 0 })).toThrow(/attempt/);
  });
});

describe('newRunId', () => {
  it('sorts by creation time and is unique', () => {
    const early = newRunId(new Date('2026-01-05T14:30:12.123Z'));
    const late = newRunId(new Date('2026-01-05T14:30:12.124Z'));
    expect(early).toMatch(/^20260105-143012-123-[0-9a-z]{6}$/);
    expect(early < late).toBe(true);
    expect(new Set(Array.from({ length: 1000 }, () => newRunId())).size).toBe(1000);
  });
});
