/**
 * `adoptRun` (a lost journal): items found in the manifest become
 * one completed run, done for the desired-state comparison, charged nothing,
 * never counted as sent; all of it or nothing.
 */
import { describe, expect, it } from 'vitest';
import type { AdoptedItem, AdoptRunInput } from '../../src/journal/index.js';
import { item, onEachStore, tempJournal, UNIQUE_VIOLATION } from './helpers.js';

function adopted(key: string, generationId: string, request: unknown = { prompt: key }) {
  return {
    item: { ...item(key), sourceItemKey: key === 'clip' ? 'a' : null },
    attempt: { idempotencyKey: `ib1-adopted-${key}`, request },
    outputs: [
      {
        output: { n: 1, generationId, url: `https://cdn/${key}.png`, kind: 'image', modelId: 'm' },
        file: { file: `${key}.png`, sha256: 'f'.repeat(64), bytes: 7, contentType: 'image/png' },
      },
    ],
  } satisfies AdoptedItem;
}

const SERVICE = 'http://service.test';

function input(runId: string, items: AdoptedItem[]): AdoptRunInput {
  return {
    run: {
      runId,
      jobName: 'spring',
      jobPath: '/j.yaml',
      jobHash: 'h',
      budget: null,
      options: { service: SERVICE },
    },
    items,
    event: { type: 'run.adopted', message: `adopted ${items.length} item(s)` },
  };
}

onEachStore(() => {
  describe('adoptRun', () => {
    it('records a completed, uncharged run whose items are done with their outputs downloaded', async () => {
      const journal = await tempJournal();
      const run = journal.adoptRun(
        input('adopted-1', [
          adopted('a', 'gen-a'),
          adopted('clip', 'gen-clip', { prompt: 'clip', generationId: 'gen-a' }),
        ]),
      );
      expect(run).toMatchObject({ runId: 'adopted-1', status: 'completed' });
      expect(run.finishedAt).toEqual(expect.any(Number));
      expect(
        journal.listItems('adopted-1').map((i) => [i.itemKey, i.state, i.chargedCredits]),
      ).toEqual([
        ['a', 'succeeded', 0],
        ['clip', 'succeeded', 0],
      ]);
      expect(journal.listAttempts('adopted-1', 'a')).toMatchObject([
        { state: 'succeeded', chargedCost: 0, generationIds: ['gen-a'], submittedAt: null },
      ]);
      expect(journal.listOutputs('adopted-1', 'downloaded').map((o) => o.file)).toEqual([
        'a.png',
        'clip.png',
      ]);
      expect(journal.spendSummary('adopted-1').charged).toBe(0);
      expect(journal.recentCreates(0)).toEqual([]);
      const history = journal.latestItems('spring', SERVICE);
      expect(history.get('clip')?.sourceGenerationId).toBe('gen-a');
      expect(journal.listEvents('adopted-1').map((e) => e.type)).toEqual(['run.adopted']);
    });

    it('writes nothing when any part fails (one transaction)', async () => {
      const journal = await tempJournal();
      journal.adoptRun(input('adopted-1', [adopted('a', 'gen-a')]));
      // The same idempotency key again: the UNIQUE constraint fails the second adoption.
      expect(() =>
        journal.adoptRun(input('adopted-2', [adopted('b', 'gen-b'), adopted('a', 'gen-a')])),
      ).toThrow(UNIQUE_VIOLATION);
      expect(journal.getRun('adopted-2')).toBeUndefined();
      expect([...journal.latestItems('spring', SERVICE).keys()]).toEqual(['a']);
    });
  });
});
