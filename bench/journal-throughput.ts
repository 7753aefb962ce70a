/**
 * Journal throughput on both stores: full attempt lifecycles (intent ->
 * submitted -> succeeded, each its own transaction) per second. SQLite with
 * the shipped durability (WAL + synchronous FULL) in a temp dir; PostgreSQL
 * on a server started here on loopback (./postgres.ts, `fsync=off`: the
 * figure is the store's own cost, round trips included, not a disk's), when
 * its binaries are installed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { idempotencyKey, type Journal, openJournal } from '../src/journal/index.js';
import { withBenchPostgres } from './postgres.js';
import type { Benchmark, BenchRow } from './types.js';

const ITEMS = 1000;

export const journalThroughput: Benchmark = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ibatch-bench-journal-'));
  try {
    const rows = [
      await measure(await openJournal(join(dir, 'journal.db')), 'SQLite: WAL, synchronous=FULL'),
    ];
    const postgres = await withBenchPostgres('journalThroughput', async ({ server, version }) =>
      measure(await openJournal(await server.newSchema()), `${version}: loopback, fsync=off`),
    );
    return postgres ? [...rows, postgres] : rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

async function measure(journal: Journal, store: string): Promise<BenchRow> {
  try {
    const runId = 'bench';
    journal.createRun({
      runId,
      jobName: 'bench',
      jobPath: '/bench.yaml',
      jobHash: 'h',
      budget: 1e9,
    });
    journal.addItems(
      runId,
      Array.from({ length: ITEMS }, (_, i) => ({
        itemKey: `i${i}`,
        stepId: 's',
        kind: 'image',
        request: { i },
        requestHash: `h${i}`,
        quotedCost: 1,
      })),
    );
    const start = performance.now();
    for (let i = 0; i < ITEMS; i += 1) {
      const itemKey = `i${i}`;
      const base = { runId, itemKey, attemptNo: 1 };
      journal.recordAttemptIntent({
        ...base,
        idempotencyKey: idempotencyKey({
          jobName: 'bench',
          runId,
          stepId: 's',
          itemKey,
          attempt: 1,
        }),
        request: { i },
        requestHash: `h${i}`,
        quotedCost: 1,
      });
      journal.recordAttemptSubmitted({ ...base, chargedCost: 1, generationIds: [`g${i}`] });
      journal.recordAttemptOutcome({
        ...base,
        state: 'succeeded',
        itemState: 'succeeded',
        outputs: [
          { n: 1, generationId: `g${i}`, url: `http://x/${i}.png`, kind: 'image', modelId: 'm' },
        ],
      });
    }
    const seconds = (performance.now() - start) / 1000;
    const transitions = (ITEMS * 3) / seconds;
    return {
      group: 'journal',
      metric: `state transitions per second (${store})`,
      value: transitions,
      unit: 'tx/s',
      target: '>= 20',
      pass: transitions >= 20,
      note: `${ITEMS} items x 3 commits; the service allows ~2 req/s`,
    };
  } finally {
    journal.close();
  }
}
