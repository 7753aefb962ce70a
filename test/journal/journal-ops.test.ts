import { describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import { defer } from '../helpers/index.js';
import {
  intendAttempt,
  item,
  attemptKey as key,
  onEachStore,
  refundAttempt,
  seedRun,
  submitAttempt,
  tempJournal,
  UNIQUE_VIOLATION,
} from './helpers.js';

onEachStore(() => {
  describe('runs', () => {
    it('creates, finds the unfinished one, updates status, budget and not-before', async () => {
      const journal = await tempJournal();
      seedRun(journal, 100, 'run-a');
      journal.setRunStatus('run-a', 'completed');
      seedRun(journal, 50, 'run-b');
      expect(journal.findUnfinishedRun('spring')?.runId).toBe('run-b');
      journal.setRunStatus('run-b', 'stopped_credits');
      expect(journal.findUnfinishedRun('spring')?.status).toBe('stopped_credits');
      expect(journal.getRun('run-b')?.finishedAt).toEqual(expect.any(Number));
      journal.setRunNotBefore('run-b', 1234);
      journal.setRunBudget('run-b', 75);
      expect(journal.getRun('run-b')).toMatchObject({ notBefore: 1234, budget: 75, options: {} });
      journal.setRunStatus('run-b', 'completed');
      expect(journal.findUnfinishedRun('spring')).toBeUndefined();
      expect(journal.listRuns('spring').map((r) => r.runId)).toEqual(['run-b', 'run-a']);
      expect(journal.getRun('nope')).toBeUndefined();
    });

    it('records the job facts as one text in the run options, beside the others', async () => {
      const journal = await tempJournal();
      seedRun(journal, 100, 'run-a');
      journal.setRunOutputDir('run-a', '/out', 'here');
      const facts = JSON.stringify({ input: 'f', service: 's', removed: [], changed: [] });
      journal.setRunJobFacts('run-a', facts);
      journal.setRunJobFacts('run-a', facts);
      expect(journal.getRun('run-a')?.options).toEqual({
        outputDir: '/out',
        host: 'here',
        jobFacts: facts,
      });
    });
  });

  describe('items', () => {
    it('keeps template values in job order; an item recorded without them gets them on resume', async () => {
      const journal = await tempJournal();
      const runId = seedRun(journal);
      const vars = { scene: 'à Paris café', product: 'silk scarf', n: 2 };
      journal.addItems(runId, [{ ...item('a'), vars }, item('b')]);
      expect(Object.entries(journal.getItem(runId, 'a')?.vars ?? {})).toEqual(Object.entries(vars));
      // As an item written before migration 4 (no values): a re-expansion fills them in once.
      expect(journal.getItem(runId, 'b')?.vars).toBeNull();
      journal.addItems(runId, [{ ...item('b'), vars: { scene: 'beach' } }]);
      expect(journal.getItem(runId, 'b')?.vars).toEqual({ scene: 'beach' });
      journal.addItems(runId, [{ ...item('b'), vars: { scene: 'other' } }]);
      expect(journal.getItem(runId, 'b')?.vars).toEqual({ scene: 'beach' });
    });

    it('reads a resumed run leanly: (key, step, request hash), the first items not ended, the succeeded ones on its service', async () => {
      const journal = await tempJournal();
      const runId = seedRun(journal);
      journal.addItems(
        runId,
        ['a', 'b', 'c', 'd'].map((key) => item(key)),
      );
      journal.setItemState(runId, 'a', { state: 'succeeded' });
      journal.setItemState(runId, 'c', { state: 'failed' });
      const seen: unknown[] = [];
      journal.eachRunItemHash(runId, (row) => seen.push(row));
      expect(seen).toEqual(
        ['a', 'b', 'c', 'd'].map((key) => ({
          itemKey: key,
          stepId: 'portraits',
          requestHash: `hash-${key}`,
        })),
      );
      expect(journal.firstUnendedItemKeys(runId, 1)).toEqual(['b']);
      expect(journal.firstUnendedItemKeys(runId, 5)).toEqual(['b', 'd']);
      // The run recorded no service: asked on another one, it holds nothing there.
      expect([...journal.succeededItemKeys(runId, '')]).toEqual(['a']);
      expect([...journal.succeededItemKeys(runId, 'http://elsewhere.test/api/v1')]).toEqual([]);
    });

    it('an attempt keeps the request it was sent with when its item gets another one', async () => {
      const journal = await tempJournal();
      const runId = seedRun(journal);
      // The request intendAttempt sends: the item's own, so stored once (migration 8).
      journal.addItems(runId, [{ ...item('a'), request: {}, requestHash: 'h' }]);
      intendAttempt(journal, runId, 'a');
      expect(journal.getAttempt(runId, 'a', 1)).toMatchObject({ request: {}, requestHash: 'h' });
      submitAttempt(journal, runId, 'a', 1, ['g1'], 10);
      journal.recordAttemptOutcome({
        runId,
        itemKey: 'a',
        attemptNo: 1,
        state: 'failed',
        itemState: 'pending',
        error: 'model failed',
      });
      const next = { ...item('a'), request: { prompt: 'b' }, requestHash: 'hash-b' };
      expect(journal.replaceItemRequest(runId, next)).toBe(true);
      expect(journal.getItem(runId, 'a')).toMatchObject({ request: { prompt: 'b' } });
      expect(journal.getAttempt(runId, 'a', 1)).toMatchObject({ request: {}, requestHash: 'h' });
    });

    it('adds once, reports changed requests on re-expansion, filters by state and step', async () => {
      const journal = await tempJournal();
      const runId = seedRun(journal);
      expect(journal.addItems(runId, [item('a'), item('b'), item('c', 'clips')])).toEqual({
        inserted: 3,
        changed: [],
      });
      const again = journal.addItems(runId, [item('a'), { ...item('b'), requestHash: 'other' }]);
      expect(again).toEqual({ inserted: 0, changed: ['b'] });
      // (was the state 'waiting', which the engine never set and is gone)
      journal.setItemState(runId, 'b', { state: 'submitted', notBefore: 99, error: 'rate' });
      expect(journal.getItem(runId, 'b')).toMatchObject({
        state: 'submitted',
        notBefore: 99,
        error: 'rate',
        request: { prompt: 'b' },
      });
      journal.setItemState(runId, 'b', { state: 'pending' });
      expect(journal.getItem(runId, 'b')).toMatchObject({
        state: 'pending',
        notBefore: 99,
        error: 'rate',
      });
      expect(journal.listItems(runId, { states: ['pending'] }).map((i) => i.itemKey)).toEqual([
        'a',
        'b',
        'c',
      ]);
      expect(journal.listItems(runId, { stepId: 'clips' }).map((i) => i.itemKey)).toEqual(['c']);
      journal.setItemState(runId, 'c', { state: 'skipped', error: 'source failed' });
      expect(journal.listFailures(runId).map((i) => [i.itemKey, i.error])).toEqual([
        ['c', 'source failed'],
      ]);
    });

    it("reads by state what a scan of the run's items shows, through every change, another run's items apart", async () => {
      const journal = await tempJournal();
      const runId = seedRun(journal);
      const other = seedRun(journal, null, 'run-2');
      journal.addItems(
        runId,
        ['a', 'b', 'c', 'd'].map((k) => item(k, k === 'd' ? 'clips' : 'hero')),
      );
      journal.addItems(other, [item('a'), item('z')]);
      journal.setItemState(other, 'z', { state: 'failed', error: 'other run' });
      const states = ['pending', 'submitted', 'succeeded', 'failed', 'blocked', 'skipped'] as const;
      const agrees = () => {
        const all = journal.listItems(runId);
        for (const state of states) {
          const scanned = all.filter((i) => i.state === state).map((i) => i.itemKey);
          expect(journal.listItems(runId, { states: [state] }).map((i) => i.itemKey)).toEqual(
            scanned,
          );
        }
        expect(journal.listFailures(runId).map((i) => i.itemKey)).toEqual(
          all
            .filter((i) => ['failed', 'blocked', 'skipped'].includes(i.state))
            .map((i) => i.itemKey),
        );
      };
      agrees();
      expect(journal.listFailures(runId)).toEqual([]);
      journal.setItemState(runId, 'b', { state: 'failed', error: 'x' });
      agrees();
      journal.setItemState(runId, 'd', { state: 'blocked', error: 'y' });
      agrees();
      journal.setItemState(runId, 'b', { state: 'pending' });
      journal.setItemState(runId, 'd', { state: 'succeeded' });
      agrees();
      expect(journal.listFailures(runId)).toEqual([]);
      expect(journal.listFailures(other).map((i) => i.itemKey)).toEqual(['z']);
    });
  });

  describe('pages of items', () => {
    it("walks a run page by page, each item once, in insertion order, past other runs' rows", async () => {
      const journal = await tempJournal();
      const other = seedRun(journal, null, 'run-0');
      journal.addItems(other, [item('x'), item('y')]);
      const runId = seedRun(journal);
      const keys = ['k5', 'k1', 'k4', 'k2', 'k3', 'k0', 'k6'];
      journal.addItems(
        runId,
        keys.map((k) => item(k)),
      );
      journal.addItems(other, [item('z')]);
      const seen: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = journal.listItems(runId, { limit: 3, ...(after ? { after } : {}) });
        if (page.length === 0) break;
        seen.push(...page.map((i) => i.itemKey));
        after = page.at(-1)?.itemKey;
      }
      expect(seen).toEqual(keys);
    });

    it('pages with their rows: each item once in insertion order with its own outputs and attempts; left early, the journal reads on', async () => {
      const journal = await tempJournal();
      const runId = seedRun(journal);
      const keys = ['k3', 'k1', 'k4', 'k0', 'k2'];
      journal.addItems(
        runId,
        keys.map((k) => item(k)),
      );
      // k1 and k0 went out; k1's second attempt made two outputs.
      for (const [key, attempts] of [
        ['k1', 2],
        ['k0', 1],
      ] as const) {
        for (let no = 1; no <= attempts; no++) {
          intendAttempt(journal, runId, key, no);
          submitAttempt(journal, runId, key, no, [`g-${key}-${no}`]);
        }
        journal.recordAttemptOutcome({
          runId,
          itemKey: key,
          attemptNo: attempts,
          state: 'succeeded',
          itemState: 'succeeded',
          outputs: Array.from({ length: attempts }, (_, i) => ({
            n: i + 1,
            generationId: `g-${key}-${attempts}`,
            url: `http://x/${key}-${i + 1}.png`,
            kind: 'image',
            modelId: 'img-model',
          })),
        });
      }
      const pages = journal.snapshot(() => [...journal.itemPagesWithRows(runId, 2)]);
      expect(pages.map((p) => p.items.map((i) => i.itemKey))).toEqual([
        ['k3', 'k1'],
        ['k4', 'k0'],
        ['k2'],
      ]);
      expect(pages.map((p) => p.outputs.map((o) => `${o.itemKey}#${o.n}`))).toEqual([
        ['k1#1', 'k1#2'],
        ['k0#1'],
        [],
      ]);
      expect(pages.map((p) => p.attempts.map((a) => `${a.itemKey}@${a.attemptNo}`))).toEqual([
        ['k1@1', 'k1@2'],
        ['k0@1'],
        [],
      ]);
      // Left after the first page, with the next one asked for.
      journal.snapshot(() => {
        for (const page of journal.itemPagesWithRows(runId, 2)) if (page.items.length > 0) break;
      });
      expect(journal.listItems(runId).map((i) => i.itemKey)).toEqual(keys);
      expect(journal.getItem(runId, 'k2')?.state).toBe('pending');
    });

    it('a snapshot reads one state of the journal while another connection commits', async () => {
      const journal = await tempJournal();
      const runId = seedRun(journal);
      journal.addItems(runId, [item('a'), item('b'), item('c'), item('d')]);
      const reader = await openJournal(journal.path, { readonly: true });
      defer(() => reader.close());
      const pages = reader.snapshot(() => {
        const first = reader.listItems(runId, { limit: 2 });
        // The page's last item goes, and another arrives, between the two pages.
        expect(journal.removeUnattemptedItem(runId, 'b')).toBe(true);
        journal.addItems(runId, [item('e')]);
        return [first, reader.listItems(runId, { limit: 2, after: first.at(-1)?.itemKey ?? '' })];
      });
      expect(pages.flat().map((i) => i.itemKey)).toEqual(['a', 'b', 'c', 'd']);
      expect(reader.listItems(runId).map((i) => i.itemKey)).toEqual(['a', 'c', 'd', 'e']);
    });

    it("a snapshot passes its work's own errors through: a full output disk is not the journal's fault", async () => {
      const journal = await tempJournal();
      seedRun(journal);
      const full = Object.assign(new Error('no space left on device, write'), { code: 'ENOSPC' });
      expect(() =>
        journal.snapshot(() => {
          journal.getRun('run-1');
          throw full;
        }),
      ).toThrow(full);
      expect(journal.fault).toBeUndefined();
      expect(journal.snapshot(() => journal.getRun('run-1')?.runId)).toBe('run-1');
    });
  });

  describe('attempt lifecycle', () => {
    it('intent -> submitted -> succeeded keeps attempt, item, money and outputs consistent', async () => {
      const journal = await tempJournal();
      const runId = seedRun(journal, 100);
      journal.addItems(runId, [item('a')]);
      const intent = journal.recordAttemptIntent({
        runId,
        itemKey: 'a',
        attemptNo: 1,
        idempotencyKey: key('a'),
        request: { prompt: 'a' },
        requestHash: 'hash-a',
        quotedCost: 10,
      });
      expect(intent.kind).toBe('recorded');
      expect(journal.getItem(runId, 'a')).toMatchObject({
        state: 'submitting',
        attemptsUsed: 1,
        reservedCredits: 10,
      });
      expect(journal.getOpenAttempt(runId, 'a')).toMatchObject({
        state: 'intent',
        idempotencyKey: key('a'),
      });
      // A resume re-records the same intent: it gets the stored attempt back, nothing doubles.
      const replay = journal.recordAttemptIntent({
        runId,
        itemKey: 'a',
        attemptNo: 1,
        idempotencyKey: key('a'),
        request: {},
        requestHash: 'hash-a',
        quotedCost: 10,
      });
      expect(replay.kind).toBe('existing');
      expect(journal.spendSummary(runId)).toMatchObject({ reserved: 10, committed: 10 });

      submitAttempt(journal, runId, 'a', 1, ['g1'], 12);
      submitAttempt(journal, runId, 'a', 1, ['g1'], 12);
      expect(journal.getItem(runId, 'a')).toMatchObject({
        state: 'submitted',
        reservedCredits: 0,
        chargedCredits: 12,
      });
      expect(journal.listOpenAttempts(runId)).toHaveLength(1);

      journal.recordAttemptOutcome({
        runId,
        itemKey: 'a',
        attemptNo: 1,
        state: 'succeeded',
        itemState: 'succeeded',
        outputs: [
          { n: 1, generationId: 'g1', url: 'http://x/1.png', kind: 'image', modelId: 'img-model' },
        ],
      });
      expect(journal.getAttempt(runId, 'a', 1)).toMatchObject({
        state: 'succeeded',
        generationIds: ['g1'],
        chargedCost: 12,
        finishedAt: expect.any(Number),
      });
      expect(journal.listOpenAttempts(runId)).toHaveLength(0);
      expect(journal.spendSummary(runId)).toEqual({
        reserved: 0,
        charged: 12,
        refunded: 0,
        net: 12,
        committed: 12,
      });

      expect(journal.listOutputs(runId, 'pending')).toHaveLength(1);
      journal.markOutputDownloaded(runId, 'a', 1, {
        file: 'portraits/a-1.png',
        sha256: 'ff',
        bytes: 3,
        contentType: 'image/png',
      });
      expect(journal.listOutputs(runId, 'pending')).toHaveLength(0);
      expect(journal.listOutputs(runId)[0]).toMatchObject({
        state: 'downloaded',
        file: 'portraits/a-1.png',
        bytes: 3,
      });
      // The lean read of the names downloaded outputs took, with their owners.
      const files: unknown[] = [];
      journal.eachDownloadedFile(runId, (o) => files.push({ ...o }));
      expect(files).toEqual([{ itemKey: 'a', n: 1, file: 'portraits/a-1.png' }]);
      // A late duplicate outcome changes nothing.
      refundAttempt(journal, runId, 'a', 1);
      expect(journal.getItem(runId, 'a')?.state).toBe('succeeded');
    });

    it('a refunded failure then a retry: net spend counts only the success', async () => {
      const journal = await tempJournal();
      const runId = seedRun(journal, 25);
      journal.addItems(runId, [item('a')]);
      intendAttempt(journal, runId, 'a', 1, 10);
      submitAttempt(journal, runId, 'a', 1, ['g1'], 10);
      journal.recordAttemptOutcome({
        runId,
        itemKey: 'a',
        attemptNo: 1,
        state: 'failed',
        itemState: 'pending',
        refunded: true,
        error: 'model failed',
      });
      expect(journal.getItem(runId, 'a')).toMatchObject({
        state: 'pending',
        error: 'model failed',
        chargedCredits: 10,
        refundedCredits: 10,
      });
      intendAttempt(journal, runId, 'a', 2, 10);
      submitAttempt(journal, runId, 'a', 2, ['g2'], 10);
      journal.recordAttemptOutcome({
        runId,
        itemKey: 'a',
        attemptNo: 2,
        state: 'succeeded',
        itemState: 'succeeded',
      });
      expect(journal.spendSummary(runId)).toEqual({
        reserved: 0,
        charged: 20,
        refunded: 10,
        net: 10,
        committed: 10,
      });
      expect(journal.listAttempts(runId, 'a').map((a) => a.state)).toEqual(['failed', 'succeeded']);
    });

    it('a rejected create releases the reservation and charges nothing', async () => {
      const journal = await tempJournal();
      const runId = seedRun(journal, 100);
      journal.addItems(runId, [item('a')]);
      intendAttempt(journal, runId, 'a', 1, 10);
      journal.recordAttemptOutcome({
        runId,
        itemKey: 'a',
        attemptNo: 1,
        state: 'rejected',
        itemState: 'failed',
        httpStatus: 400,
        error: 'validation_error',
      });
      expect(journal.getAttempt(runId, 'a', 1)).toMatchObject({
        state: 'rejected',
        httpStatus: 400,
      });
      expect(journal.spendSummary(runId).committed).toBe(0);
    });

    it('the same idempotency key can never be stored twice', async () => {
      const journal = await tempJournal();
      const runId = seedRun(journal);
      journal.addItems(runId, [item('a'), item('b')]);
      journal.recordAttemptIntent({
        runId,
        itemKey: 'a',
        attemptNo: 1,
        idempotencyKey: 'k',
        request: {},
        requestHash: 'h',
        quotedCost: 1,
      });
      expect(() =>
        journal.recordAttemptIntent({
          runId,
          itemKey: 'b',
          attemptNo: 1,
          idempotencyKey: 'k',
          request: {},
          requestHash: 'h',
          quotedCost: 1,
        }),
      ).toThrow(UNIQUE_VIOLATION);
      expect(journal.getItem(runId, 'b')).toMatchObject({ state: 'pending', reservedCredits: 0 });
    });
  });

  describe('budget', () => {
    it('refuses the reservation that would pass the budget and records nothing', async () => {
      const journal = await tempJournal();
      const runId = seedRun(journal, 25);
      journal.addItems(runId, [item('a'), item('b'), item('c')]);
      const intent = (itemKey: string) => intendAttempt(journal, runId, itemKey);
      expect(intent('a').kind).toBe('recorded');
      expect(intent('b').kind).toBe('recorded');
      const refused = intent('c');
      expect(refused).toEqual({
        kind: 'over-budget',
        reserve: {
          ok: false,
          cap: 'budget',
          limit: 25,
          committed: 20,
          requested: 10,
          // Where the job stands (budgetStanding): 20 reserved, 5 left.
          standing: {
            budget: 25,
            committed: 20,
            charged: 0,
            refunded: 0,
            reserved: 20,
            net: 0,
            remaining: 5,
          },
        },
      });
      expect(journal.getAttempt(runId, 'c', 1)).toBeUndefined();
      expect(journal.getItem(runId, 'c')?.state).toBe('pending');
      // A refund frees room.
      submitAttempt(journal, runId, 'a', 1, ['g'], 10);
      refundAttempt(journal, runId, 'a', 1);
      expect(intent('c').kind).toBe('recorded');
      expect(journal.committedCredits(runId)).toBe(20);
    });

    it('never lets concurrent reservations pass the budget (exact fits allowed)', async () => {
      const journal = await tempJournal();
      const runId = seedRun(journal, 1);
      const keys = Array.from({ length: 50 }, (_, i) => `i${i}`);
      journal.addItems(
        runId,
        keys.map((k) => item(k)),
      );
      // Interleave reservations from many async tasks; SQL decides each atomically.
      const results = await Promise.all(
        keys.map(async (k) => {
          await Promise.resolve();
          return journal.reserveCredits(runId, k, 0.1);
        }),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(10);
      expect(journal.committedCredits(runId)).toBeCloseTo(1, 9);
      journal.releaseReservation(runId, 'i0');
      expect(journal.committedCredits(runId)).toBeCloseTo(0.9, 9);
    });

    it('no budget means no limit', async () => {
      const journal = await tempJournal();
      const runId = seedRun(journal, null);
      journal.addItems(runId, [item('a')]);
      expect(journal.reserveCredits(runId, 'a', 1e9).ok).toBe(true);
    });
  });

  describe('summaries, assets, influencers, events', () => {
    it('per-step spend and progress', async () => {
      const journal = await tempJournal();
      const runId = seedRun(journal);
      journal.addItems(runId, [item('a'), item('b'), item('c', 'clips')]);
      intendAttempt(journal, runId, 'c', 1, 5);
      intendAttempt(journal, runId, 'a', 1, 10);
      submitAttempt(journal, runId, 'a', 1, ['g'], 10);
      expect(journal.progressByStep(runId)).toEqual([
        { stepId: 'portraits', total: 2, states: { submitted: 1, pending: 1 } },
        { stepId: 'clips', total: 1, states: { submitting: 1 } },
      ]);
      expect(journal.spendByStep(runId)).toEqual([
        { stepId: 'portraits', reserved: 0, charged: 10, refunded: 0, net: 10, committed: 10 },
        { stepId: 'clips', reserved: 5, charged: 0, refunded: 0, net: 0, committed: 5 },
      ]);
    });

    it('assets are found by scope and content hash only', async () => {
      const journal = await tempJournal();
      journal.recordAsset({
        scope: 'http://svc/api/v1#acct1',
        sha256: 'abc',
        mimeType: 'image/png',
        size: 3,
        assetUrl: 'http://svc/a/1',
      });
      expect(journal.findAsset('http://svc/api/v1#acct1', 'abc')).toMatchObject({
        assetUrl: 'http://svc/a/1',
        size: 3,
      });
      expect(journal.findAsset('http://svc/api/v1#acct2', 'abc')).toBeUndefined();
    });

    it('influencers are saved step by step and found for reuse', async () => {
      const journal = await tempJournal();
      const lookup = { scope: 's', jobName: 'spring', localId: 'ava', configHash: 'c1' };
      journal.saveInfluencer({
        ...lookup,
        status: 'intent',
        idempotencyKey: 'k1',
        attemptNo: 1,
        runId: 'run-1',
      });
      journal.saveInfluencer({
        ...lookup,
        status: 'queued',
        trainingId: 't1',
        influencerId: 'i1',
        creditsCost: 50,
      });
      const done = journal.saveInfluencer({ ...lookup, status: 'succeeded', loraUrl: 'http://l' });
      expect(done).toMatchObject({
        status: 'succeeded',
        idempotencyKey: 'k1',
        trainingId: 't1',
        influencerId: 'i1',
        loraUrl: 'http://l',
        creditsCost: 50,
        refunded: false,
        runId: 'run-1',
      });
      expect(journal.findInfluencer({ ...lookup, configHash: 'c2' })).toBeUndefined();
    });

    it("a training's intent marks its record `intent` with the attempt's key, with the intent or not at all; an earlier attempt's influencer stays named", async () => {
      const journal = await tempJournal();
      const runId = seedRun(journal, 100);
      journal.addItems(runId, [item('train:ava', '_train')]);
      const lookup = { scope: 's', jobName: 'spring', localId: 'ava', configHash: 'c1' };
      // Attempt 1 ran and failed: its record names the influencer it made.
      journal.saveInfluencer({
        ...lookup,
        runId,
        status: 'failed',
        trainingId: 't1',
        influencerId: 'i1',
        loraUrl: null,
        creditsCost: 50,
        refunded: true,
        error: 'training failed',
      });
      const intend = (attemptNo: number, quotedCost: number) =>
        journal.recordAttemptIntent({
          runId,
          itemKey: 'train:ava',
          attemptNo,
          idempotencyKey: `key-${attemptNo}`,
          request: {},
          requestHash: 'h',
          quotedCost,
          training: lookup,
        });
      // Over the budget nothing is sent, so the record stays as it was.
      expect(intend(2, 500).kind).toBe('over-budget');
      expect(journal.findInfluencer(lookup)).toMatchObject({
        status: 'failed',
        influencerId: 'i1',
      });
      expect(intend(2, 50).kind).toBe('recorded');
      expect(journal.findInfluencer(lookup)).toMatchObject({
        status: 'intent',
        idempotencyKey: 'key-2',
        attemptNo: 2,
        runId,
        // Still the job's (a failed influencer may keep its username) until the answer names the new one.
        trainingId: 't1',
        influencerId: 'i1',
        creditsCost: 50,
      });
    });

    it('events form an ordered timeline that can be followed', async () => {
      const journal = await tempJournal();
      const runId = seedRun(journal);
      const first = journal.appendEvent(runId, { type: 'run.started', message: 'started' });
      journal.appendEvent(runId, {
        type: 'rate.paused',
        message: 'paused 5s',
        data: { retryAfterMs: 5000 },
        itemKey: 'a',
      });
      expect(journal.listEvents(runId).map((e) => e.type)).toEqual(['run.started', 'rate.paused']);
      expect(journal.listEvents(runId, { afterId: first })).toMatchObject([
        { itemKey: 'a', data: { retryAfterMs: 5000 } },
      ]);
    });
  });
});
