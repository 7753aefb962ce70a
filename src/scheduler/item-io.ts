/**
 * What goes into a generation request and what comes out of it: local files
 * become asset URLs, a job-local influencer its trained id, a `from:` item the
 * generation id of its source output; terminal statuses become output rows.
 */
import {
  type GenerationRequest,
  type GenerationStatus,
  generationOutcome,
  outputUrls,
} from '../contract/index.js';
import type { JobItem } from '../job/index.js';
import type { NewOutput } from '../journal/index.js';
import type { RunContext } from './context.js';
import { localPathOf } from './decide/input-files.js';
import type { ItemDeps } from './generation-item.js';
import { DependencyFailedError } from './item-graph.js';

/** Local files -> asset URLs, job-local influencer -> its id, `from:` -> the source output. */
export async function resolveRequest(
  ctx: RunContext,
  deps: ItemDeps,
  item: JobItem,
): Promise<GenerationRequest> {
  const input: Record<string, unknown> = { ...item.request.input };
  for (const ref of item.mediaRefs) {
    const url = await deps.assets.urlFor(localPathOf(ctx.job, ref));
    const current = input[ref.field];
    if (ref.index !== undefined && Array.isArray(current)) {
      const list = [...current];
      list[ref.index] = url;
      input[ref.field] = list;
    } else {
      input[ref.field] = url;
    }
  }
  const request: GenerationRequest = { ...item.request, input };
  if (item.influencer)
    request.influencerId = await deps.influencers.resolveOrTrain(item.influencer);
  if (item.source) {
    const source = await deps.graph.outputsOf(item.source.itemKey);
    const generationId = source.generationIds[item.source.outputIndex];
    if (!generationId) {
      throw new DependencyFailedError(
        `source ${item.source.stepId}/${item.source.itemKey} has no output #${item.source.outputIndex + 1}`,
      );
    }
    request.generationId = generationId;
  }
  return request;
}

/**
 * The outputs of a finished attempt: one per URL of each succeeded
 * generation (numbered first, so their file names do not depend on which
 * copy failed), then one per copy the service failed, with its reason and
 * no URL (listed in the manifest and the report, never downloaded).
 */
export function collectOutputs(
  item: JobItem,
  statuses: readonly GenerationStatus[],
  ids: readonly string[],
): NewOutput[] {
  const outputs: NewOutput[] = [];
  const common = { kind: item.kind, modelId: item.modelId };
  for (const status of statuses) {
    if (generationOutcome(status) !== 'succeeded') continue;
    const urls = outputUrls(status);
    for (const url of urls) {
      // One id carrying every copy: give each output the id of its copy when known.
      const generationId = urls.length > 1 ? (ids[outputs.length] ?? status.id) : status.id;
      outputs.push({ n: outputs.length + 1, generationId, url, ...common });
    }
  }
  for (const status of statuses) {
    const outcome = generationOutcome(status);
    if (outcome === 'succeeded') continue;
    const error = status.error ?? `generation ${outcome}`;
    outputs.push({ n: outputs.length + 1, generationId: status.id, url: null, ...common, error });
  }
  return outputs;
}
