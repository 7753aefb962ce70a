/**
 * A decision posted by the page, checked and written to the journal at once
 * (one committed record per output or item, like `approve`/`reject`). Only
 * outputs the listing shows can be decided on: a made-up run or item is
 * refused, not recorded. A rejection may carry an edited prompt: the item's
 * next attempt sends it (src/scheduler/decide/remake.ts), and its request records it.
 */
import { z } from 'zod';
import { type Journal, REVIEW_DECISION, type ReviewRecord } from '../../journal/index.js';
import { filterOutputs, outputId, positionsOf, type ReviewListing } from './listing.js';

const MAX_NOTE = 2000;
const MAX_PROMPT = 20_000;

const targetSchema = z.strictObject({
  runId: z.string().min(1),
  item: z.string().min(1),
  /** null: the whole item (every output of it in that run). */
  n: z.number().int().min(1).nullable(),
});

const bodySchema = z
  .strictObject({
    targets: z.array(targetSchema).min(1).max(1000).optional(),
    filter: z
      .strictObject({
        step: z.string().optional(),
        status: z.string().optional(),
        review: z.string().optional(),
        q: z.string().optional(),
      })
      .optional(),
    decision: z.enum([REVIEW_DECISION.approved, REVIEW_DECISION.rejected, REVIEW_DECISION.cleared]),
    note: z.string().max(MAX_NOTE).nullable().optional(),
    /** The prompt the item's next attempt sends instead of the job's (a rejection only). */
    prompt: z.string().max(MAX_PROMPT).nullable().optional(),
  })
  .refine((b) => (b.targets === undefined) !== (b.filter === undefined), {
    message: 'give either targets or filter',
  })
  .refine((b) => !b.prompt?.trim() || b.decision === REVIEW_DECISION.rejected, {
    message: 'only a rejection carries an edited prompt (it is for the next attempt)',
  });

export interface DecisionContext {
  readonly jobName: string;
  readonly reviewer: string;
}

/**
 * Records the decision: the ids of the outputs it changed and the records
 * written (oldest first), or why it was refused.
 */
export function decide(
  journal: Journal,
  listing: ReviewListing,
  context: DecisionContext,
  body: unknown,
): { ids: string[]; recorded: ReviewRecord[] } | { error: string } {
  const parsed = bodySchema.safeParse(body);
  if (!parsed.success) {
    return { error: `not a decision: ${parsed.error.issues.map((i) => i.message).join('; ')}` };
  }
  const { decision, note, prompt } = parsed.data;
  const targets = parsed.data.targets ?? filteredTargets(listing, parsed.data.filter ?? {});
  const changed = new Set<string>();
  for (const t of targets) {
    const affected = positionsOf(listing, t.runId, t.item, t.n);
    if (affected.length === 0) {
      return { error: `no output ${outputId(t.runId, t.item, t.n)} in this job's listing` };
    }
    for (const i of affected) changed.add(listing.outputs[i]?.id ?? '');
  }
  const text = note?.trim() ? note.trim() : null;
  const edited = prompt?.trim() ? prompt.trim() : null;
  const recorded = targets.map((t) =>
    journal.recordReview({
      jobName: context.jobName,
      runId: t.runId,
      itemKey: t.item,
      n: t.n,
      decision,
      reviewer: context.reviewer,
      note: text,
      prompt: edited,
    }),
  );
  return { ids: [...changed], recorded };
}

function filteredTargets(
  listing: ReviewListing,
  filter: Parameters<typeof filterOutputs>[1],
): z.infer<typeof targetSchema>[] {
  return filterOutputs(listing.outputs, filter).map((o) => ({
    runId: o.runId,
    item: o.item,
    n: o.n,
  }));
}
