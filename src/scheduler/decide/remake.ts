/**
 * What review decisions change in the next run (docs/review.md). An item
 * whose output of its latest succeeded run was rejected is made again: a new
 * attempt with a new key in a new run, with a new seed where the model has a
 * `seed` field, and the prompt edited in review when there is one.
 *
 * The seed is derived from the item key and the run of the rejected output,
 * so `plan` quotes the request `run` sends, and a resume sends the same body
 * (the item's journal record holds it). The item's identity hash stays the
 * job file's: once remade and not rejected, the item is done again.
 */
import type { JobItem, ModelCatalog } from '../../job/index.js';
import { REVIEW_DECISION, ReviewIndex, type ReviewRecord } from '../../journal/index.js';
import { contentHash } from '../../shared/index.js';

/** The service's seed range: -1 (random) or 1 to 2147483647. */
const MAX_SEED = 2_147_483_647;

/** The rejections in force on a job's outputs, by the run that made them (`ReviewIndex`'s rule). */
export class Rejections {
  readonly #index: ReviewIndex;

  constructor(reviews: readonly ReviewRecord[]) {
    this.#index = new ReviewIndex(reviews);
  }

  /** The rejections in force on the outputs (or the whole) of an item `runId` made, oldest first. */
  #of(runId: string, itemKey: string): ReviewRecord[] {
    return this.#index
      .ofItem(runId, itemKey)
      .map((review) => this.#index.of(runId, itemKey, review.n))
      .filter((review) => review?.decision === REVIEW_DECISION.rejected)
      .filter((review): review is NonNullable<typeof review> => review !== undefined)
      .sort((a, b) => a.id - b.id);
  }

  /** Whether an output (or the whole item) that `runId` made of the item is rejected. */
  has(runId: string, itemKey: string): boolean {
    return this.#of(runId, itemKey).length > 0;
  }

  /** The item as the next attempt sends it: a new seed (when the model has one), the edited prompt. */
  remake(item: JobItem, rejectedRunId: string, catalog: ModelCatalog | undefined): JobItem {
    const prompt = this.#of(rejectedRunId, item.key).findLast((r) => r.prompt)?.prompt ?? null;
    const hasSeed = catalog?.get(item.modelId)?.fields.some((f) => f.name === 'seed') === true;
    if (prompt === null && !hasSeed) return item;
    const input: Record<string, unknown> = { ...item.request.input };
    if (prompt !== null) input.prompt = prompt;
    if (hasSeed) input.seed = remakeSeed(item.key, rejectedRunId);
    return { ...item, request: { ...item.request, input } };
  }
}

/** A seed in 1..2147483647 from the item key and the rejected output's run. */
export function remakeSeed(itemKey: string, rejectedRunId: string): number {
  const draw = Number.parseInt(contentHash({ itemKey, rejectedRunId }).slice(0, 12), 16);
  return 1 + (draw % MAX_SEED);
}
