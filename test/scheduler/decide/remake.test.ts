/**
 * The request of a rejected item's next attempt (src/scheduler/decide/remake.ts,
 * docs/review.md): a new seed where the model has one, the same seed for the
 * same rejection (a resume sends the same body), another for the next
 * rejection, and the prompt edited in review. End to end:
 * test/cli/review-decisions.slow.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { JobItem, ModelCatalog } from '../../../src/job/index.js';
import type { ReviewRecord } from '../../../src/journal/index.js';
import { Rejections, remakeSeed } from '../../../src/scheduler/decide/remake.js';

const catalog = new Map([
  ['flux-portrait', { id: 'flux-portrait', fields: [{ name: 'prompt' }, { name: 'seed' }] }],
  ['sdxl-lite', { id: 'sdxl-lite', fields: [{ name: 'prompt' }] }],
]) as unknown as ModelCatalog;

const item = (modelId: string): JobItem =>
  ({
    stepId: 'photos',
    key: 'photos-beach',
    modelId,
    request: { input: { prompt: 'a model on a beach', seed: -1 } },
  }) as unknown as JobItem;

const review = (over: Partial<ReviewRecord>): ReviewRecord => ({
  id: 1,
  jobName: 'demo',
  runId: 'r1',
  itemKey: 'photos-beach',
  n: 1,
  decision: 'rejected',
  reviewer: 'ana',
  note: null,
  prompt: null,
  at: 0,
  ...over,
});

describe('Rejections', () => {
  it('knows rejected outputs by the run that made them; approved and cleared ones are not', () => {
    const rejections = new Rejections([
      review({}),
      review({ id: 2, itemKey: 'photos-park', decision: 'approved' }),
      review({ id: 3, runId: 'r2', decision: 'cleared' }),
    ]);
    expect(rejections.has('r1', 'photos-beach')).toBe(true);
    expect(rejections.has('r2', 'photos-beach')).toBe(false);
    expect(rejections.has('r1', 'photos-park')).toBe(false);
  });

  it('remakes with a seed from the item and the rejected run, and the prompt edited in review', () => {
    const rejections = new Rejections([review({ prompt: 'a model on a beach at dusk' })]);
    const remade = rejections.remake(item('flux-portrait'), 'r1', catalog);
    expect(remade.request.input).toEqual({
      prompt: 'a model on a beach at dusk',
      seed: remakeSeed('photos-beach', 'r1'),
    });
    expect(rejections.remake(item('flux-portrait'), 'r1', catalog)).toEqual(remade);
    expect(remakeSeed('photos-beach', 'r2')).not.toBe(remakeSeed('photos-beach', 'r1'));
    const seed = remakeSeed('photos-beach', 'r1');
    expect(seed >= 1 && seed <= 2_147_483_647 && Number.isInteger(seed)).toBe(true);
  });

  it('leaves the seed alone where the model has none, and the request as is without an edit', () => {
    const plain = new Rejections([review({})]);
    const sdxl = item('sdxl-lite');
    expect(plain.remake(sdxl, 'r1', catalog)).toBe(sdxl);
    const edited = new Rejections([review({ prompt: 'at night' })]);
    expect(edited.remake(sdxl, 'r1', catalog).request.input).toEqual({
      prompt: 'at night',
      seed: -1,
    });
  });
});
