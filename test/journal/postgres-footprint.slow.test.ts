/**
 * What a PostgreSQL journal holds beyond its rows, where it once held far
 * more: per attempt, to keep idempotency keys unique (src/journal/postgres/
 * schema.ts, version 14: each key's 16-byte MD5 in the unique index, not the
 * key), while a key already recorded is still refused; and the per-step
 * count rows when a run's items go in by the thousand in one transaction
 * (store.ts `keyedItemsInBulk`), counted as the trigger counts one item.
 * On a real server.
 */
import { expect, it } from 'vitest';
import { describePostgres, postgresForFile } from '../helpers/postgres.js';
import { seedRun, tempJournal, UNIQUE_VIOLATION } from './helpers.js';

const server = postgresForFile();
const ATTEMPTS = 2000;

const newItem = (itemKey: string, stepId = 'hero') => ({
  itemKey,
  stepId,
  kind: 'image',
  modelId: 'img-model',
  request: { prompt: itemKey },
  requestHash: `hash-${itemKey}`,
  quotedCost: 1,
  expectedOutputs: 1,
});

/** The bytes of `tables` (with their indexes) in `schema`. */
async function bytesOf(schema: string | null, tables: readonly string[]): Promise<number> {
  const [row] = await server.query<{ bytes: string }>(
    `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = ANY($2)`,
    [schema, tables],
  );
  return Number(row?.bytes);
}

/** A fresh journal in a schema of its own (closed after the test) with seedRun's run, and the schema's name. */
async function journalWithRun() {
  const location = await server.newSchema();
  const journal = await tempJournal({}, location);
  seedRun(journal);
  return { journal, schema: new URL(location).searchParams.get('schema') };
}

describePostgres('postgres journal footprint: unique idempotency keys', () => {
  it('holds well under 60 bytes of unique index per attempt, and refuses a key twice', async () => {
    const { journal, schema } = await journalWithRun();
    const keys = Array.from({ length: ATTEMPTS + 1 }, (_, i) => `item-${i}`);
    journal.addItems(
      'run-1',
      keys.map((key) => newItem(key)),
    );
    // Keys as long as the engine's (job, run, step, item slugs and a digest: ~130 characters).
    const keyOf = (i: number) =>
      `ib1-spring-campaign-20261127-192644-123-abcdefgh-hero-item-${i}-a1-${String(i).padStart(32, 'f')}-${'x'.repeat(30)}`;
    for (let i = 0; i < ATTEMPTS; i++) {
      const intent = journal.recordAttemptIntent({
        runId: 'run-1',
        itemKey: `item-${i}`,
        attemptNo: 1,
        idempotencyKey: keyOf(i),
        request: { prompt: `item-${i}` },
        requestHash: `hash-item-${i}`,
        quotedCost: 1,
      });
      expect(intent.kind).toBe('recorded');
    }
    // Another item's attempt under a key already recorded: refused.
    expect(() =>
      journal.recordAttemptIntent({
        runId: 'run-1',
        itemKey: `item-${ATTEMPTS}`,
        attemptNo: 1,
        idempotencyKey: keyOf(7),
        request: {},
        requestHash: 'h',
        quotedCost: 1,
      }),
    ).toThrow(UNIQUE_VIOLATION);
    const [row] = await server.query<{ bytes: string; indexes: string }>(
      `SELECT coalesce(sum(pg_relation_size(i.indexrelid)), 0) AS bytes, count(*) AS indexes
           FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
           JOIN pg_namespace n ON n.oid = t.relnamespace
          WHERE n.nspname = $1 AND t.relname = 'attempts' AND i.indisunique
            AND pg_get_indexdef(i.indexrelid) LIKE '%idempotency_key%'`,
      [schema],
    );
    expect(Number(row?.indexes)).toBe(1);
    expect(Number(row?.bytes) / ATTEMPTS).toBeLessThan(60);
  });

  it("keeps a step's count rows a few pages when thousands of items go in at once, counted right", async () => {
    const { journal, schema } = await journalWithRun();
    const batch = (from: number, n: number, stepId: string) =>
      Array.from({ length: n }, (_, i) => newItem(`item-${from + i}`, stepId));
    // A run's first batch, then a second into steps that have items and one that has none,
    // with items already in among them (kept as they are, not counted twice).
    expect(journal.addItems('run-1', batch(0, 5000, 'hero')).inserted).toBe(5000);
    expect(
      journal.addItems('run-1', [...batch(4990, 1010, 'hero'), ...batch(6000, 500, 'detail')])
        .inserted,
    ).toBe(1500);
    journal.setItemState('run-1', 'item-3', { state: 'succeeded' });
    expect(journal.progressByStep('run-1').map((s) => [s.stepId, s.total, s.states])).toEqual([
      ['hero', 6000, { pending: 5999, succeeded: 1 }],
      ['detail', 500, { pending: 500 }],
    ]);
    // 6,500 items counted: a version of each count row per item would be hundreds of KB.
    expect(await bytesOf(schema, ['run_steps', 'run_step_states'])).toBeLessThan(
      2 * 3 * 8192 + 2 * 2 * 8192,
    );
  });
});
