/**
 * The request a plan quotes for an item. Parts that only exist at run time
 * are stood in for or left out: `from:` items get `SOURCE_GENERATION_STAND_IN`
 * as `generationId` (the source is not generated yet, and image-to-video
 * models want either a source or an image URL), media references (not
 * uploaded yet) become placeholder URLs, and `influencerId` of job-local
 * influencers (not trained yet) is left out (it is optional for every model
 * and no price depends on it).
 *
 * Prices do not depend on those values, and the emulator's preview-credits
 * does not resolve references (`behaviour.previewChecksReferences`), so every
 * item is quoted there. A stricter service may refuse a stand-in: such a quote
 * is reported as "priced at run time" instead of failing the plan.
 */
import type { GenerationRequest } from '../contract/index.js';
import type { JobItem } from '../job/index.js';

export const MEDIA_PLACEHOLDER_ORIGIN = 'https://ibatch.invalid/pending-upload';

/**
 * `generationId` quoted for `from:` items: a fixed, valid v4 UUID that is no
 * real generation (the source output's id exists only at run time). Fixed,
 * so `from:` requests look alike to the service whatever their source.
 */
export const SOURCE_GENERATION_STAND_IN = '00000000-0000-4000-8000-000000000000';

export interface QuoteRequest {
  readonly modelId: string;
  readonly body: GenerationRequest;
  /** Whether the body holds stand-ins for things made at run time. */
  readonly hasStandIns: boolean;
}

export function quoteRequestOf(item: JobItem): QuoteRequest {
  const input: Record<string, unknown> = { ...item.request.input };
  for (const ref of item.mediaRefs) {
    const name =
      typeof ref.path === 'string'
        ? ref.path.split(/[\\/]/).pop()
        : ref.path.file.split(/[\\/]/).pop();
    const url = `${MEDIA_PLACEHOLDER_ORIGIN}/${encodeURIComponent(name ?? 'file')}`;
    const current = input[ref.field];
    if (ref.index !== undefined && Array.isArray(current)) {
      const list = [...current];
      list[ref.index] = url;
      input[ref.field] = list;
    } else input[ref.field] = url;
  }
  const { generationId: _source, ...rest } = item.request;
  const body: GenerationRequest = {
    ...rest,
    input,
    ...(item.source !== undefined ? { generationId: SOURCE_GENERATION_STAND_IN } : {}),
  };
  const hasStandIns = item.mediaRefs.length > 0 || item.source !== undefined;
  return {
    modelId: item.modelId,
    body,
    hasStandIns,
  };
}
