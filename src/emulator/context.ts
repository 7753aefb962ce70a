/** Everything a handler needs: options, state, limiter, counters, faults, origins. */
import type { FaultPicker } from './faults.js';
import type { IdempotencyStore } from './idempotency.js';
import type { Behaviour, ResolvedOptions } from './options.js';
import type { RandomStreams } from './prng.js';
import type { RateLimiter } from './rate-limit.js';
import type { AccountState, Store } from './state.js';
import type { Stats } from './stats.js';

export interface EmulatorContext {
  readonly options: ResolvedOptions;
  behaviour: Behaviour;
  readonly store: Store;
  readonly limiter: RateLimiter;
  readonly idempotency: IdempotencyStore;
  readonly stats: Stats;
  readonly faults: FaultPicker;
  readonly random: RandomStreams;
  /** http://host:port of the API server (outputs and assets are served there). */
  mainOrigin: string;
  /** http://host:port of the upload server. */
  uploadOrigin: string;
  now(): number;
  newId(): string;
}

/** Media family of an owned, usable URL (uploaded asset or succeeded output); undefined otherwise. */
export type MediaFamily = 'image' | 'video' | 'audio';

export function ownedMedia(
  ctx: EmulatorContext,
  account: AccountState,
  url: string,
): MediaFamily | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.origin !== ctx.mainOrigin) return undefined;
  const asset = /^\/assets\/([0-9a-f-]{36})\.\w+$/.exec(parsed.pathname);
  if (asset) {
    const record = account.assets.get(asset[1] ?? '');
    if (!record?.uploaded) return undefined;
    return record.mimeType.split('/')[0] as MediaFamily;
  }
  const file = /^\/files\/([0-9a-f-]{36})\/(?:[^/]+\/)?\d+\.\w+$/.exec(parsed.pathname);
  if (file) {
    const generation = account.generations.get(file[1] ?? '');
    if (generation?.outcome !== 'success' || ctx.now() < generation.terminalAt) {
      return undefined;
    }
    return generation.kind;
  }
  return undefined;
}
