/**
 * Review decisions are an append-only log in the journal: the
 * latest decision per output (or per whole item) wins, and a decision made
 * survives the process like any other commit.
 */
import { describe, expect, it } from 'vitest';
import { openJournal, REVIEW_DECISION, ReviewIndex } from '../../src/journal/index.js';
import { onEachStore, tempJournalPath } from './helpers.js';

onEachStore(() => {
  describe('journal reviews', () => {
    it('keeps the latest decision of each output and item, across a reopen', async () => {
      const file = await tempJournalPath();
      const journal = await openJournal(file);
      const base = { jobName: 'job', runId: 'r1', itemKey: 'beach-1', reviewer: 'ana' };
      journal.recordReview({ ...base, n: 1, decision: REVIEW_DECISION.approved });
      journal.recordReview({ ...base, n: 1, decision: REVIEW_DECISION.rejected, note: 'too dark' });
      journal.recordReview({ ...base, n: 2, decision: REVIEW_DECISION.approved });
      journal.recordReview({ ...base, decision: REVIEW_DECISION.rejected, prompt: 'brighter' });
      journal.recordReview({ ...base, jobName: 'other', n: 1, decision: REVIEW_DECISION.approved });
      journal.close();

      const again = await openJournal(file, { readonly: true });
      const latest = again.latestReviews('job');
      again.close();
      expect(latest.map((r) => [r.n, r.decision, r.note, r.prompt])).toEqual([
        [1, 'rejected', 'too dark', null],
        [2, 'approved', null, null],
        [null, 'rejected', null, 'brighter'],
      ]);
      expect(latest.every((r) => r.reviewer === 'ana' && r.runId === 'r1')).toBe(true);
    });

    it("one rule for the decision in force: the newer of the output's own and its item's", async () => {
      const journal = await openJournal(await tempJournalPath());
      const base = { jobName: 'job', runId: 'r1', reviewer: 'ana' };
      journal.recordReview({ ...base, itemKey: 'a', n: 1, decision: REVIEW_DECISION.approved });
      journal.recordReview({ ...base, itemKey: 'a', decision: REVIEW_DECISION.rejected });
      journal.recordReview({ ...base, itemKey: 'b', decision: REVIEW_DECISION.approved });
      journal.recordReview({ ...base, itemKey: 'b', n: 2, decision: REVIEW_DECISION.rejected });
      journal.recordReview({ ...base, itemKey: 'c', n: 1, decision: REVIEW_DECISION.approved });
      journal.recordReview({ ...base, itemKey: 'c', n: 1, decision: REVIEW_DECISION.cleared });
      const index = new ReviewIndex(journal.latestReviews('job'));
      journal.close();
      // The item's later rejection overrides output 1's earlier approval.
      expect(index.of('r1', 'a', 1)?.decision).toBe('rejected');
      // Output 2's later rejection overrides its item's approval; output 1 keeps the item's.
      expect(index.of('r1', 'b', 2)?.decision).toBe('rejected');
      expect(index.of('r1', 'b', 1)?.decision).toBe('approved');
      // A cleared decision leaves the output unreviewed.
      expect(index.of('r1', 'c', 1)).toBeUndefined();
      expect(index.of('r2', 'a', 1)).toBeUndefined();
    });
  });
});
