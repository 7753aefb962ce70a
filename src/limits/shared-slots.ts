/**
 * The shared gate's local picture of the account's slots in Redis (refreshed
 * from script replies, plus our own grants in between), used for
 * `snapshot()`, to skip needless `shrink` calls, and to seed the local
 * fallback gate so it starts from what was already spent.
 */
import { BUCKETS, type Bucket, type RateLimits } from '../contract/index.js';
import type { BucketSnapshot } from './local-gate.js';
import type { SlotLists, SlotUpload } from './redis-store.js';

function emptyLists(): SlotLists {
  return { requests: [], generations: [], trainings: [], uploads: [] };
}

function insertSorted(list: number[], value: number): void {
  let index = list.length;
  while (index > 0 && list[index - 1]! > value) index -= 1;
  list.splice(index, 0, value);
}

export class SlotMirror {
  #used: SlotLists = emptyLists();
  #phantom: SlotLists = emptyLists();
  #refreshedAt = Number.NEGATIVE_INFINITY;

  /** True when the last full picture is older than `maxAgeMs`. */
  stale(now: number, maxAgeMs: number): boolean {
    return now - this.#refreshedAt >= maxAgeMs;
  }

  replace(slots: { used: SlotLists; phantom: SlotLists }, now: number): void {
    this.#used = slots.used;
    this.#phantom = slots.phantom;
    for (const bucket of BUCKETS) {
      this.#used[bucket].sort((a, b) => a - b);
      this.#phantom[bucket].sort((a, b) => a - b);
    }
    this.#refreshedAt = now;
  }

  addUsed(bucket: Bucket, expiry: number): void {
    insertSorted(this.#used[bucket], expiry);
  }

  #prune(now: number): void {
    for (const lists of [this.#used, this.#phantom]) {
      for (const bucket of BUCKETS) {
        const list = lists[bucket];
        while (list.length > 0 && list[0]! <= now) list.shift();
      }
    }
  }

  free(bucket: Bucket, limits: RateLimits, now: number): number {
    this.#prune(now);
    return Math.max(
      0,
      limits[bucket].count - this.#used[bucket].length - this.#phantom[bucket].length,
    );
  }

  /** Every live slot (grants and phantoms) per bucket: the local gate's `occupied`. */
  occupied(now: number): SlotLists {
    this.#prune(now);
    const all = emptyLists();
    for (const bucket of BUCKETS) {
      all[bucket] = [...this.#used[bucket], ...this.#phantom[bucket]].sort((a, b) => a - b);
    }
    return all;
  }

  snapshot(bucket: Bucket, limits: RateLimits, now: number): BucketSnapshot {
    this.#prune(now);
    const { count, windowMs } = limits[bucket];
    const used = this.#used[bucket].length;
    const phantom = this.#phantom[bucket].length;
    const available = Math.max(0, count - used - phantom);
    const live = [...this.#used[bucket], ...this.#phantom[bucket]].sort((a, b) => a - b);
    const nextFreeAt = available > 0 ? now : (live[used + phantom - count] ?? now);
    return { limit: count, windowMs, used, phantom, available, nextFreeAt };
  }
}

/** A slot this runner granted on local limits while Redis was unreachable. */
export interface LocalGrant {
  readonly bucket: Bucket;
  readonly expiry: number;
}

/**
 * What to write back when Redis answers again: our local grants, the same
 * again once per other assumed peer (their grants are not in Redis until
 * they reconnect too, so we assume they spent like us), and the slots Redis
 * held when it went away (a restarted Redis has lost them; members derived
 * from the expiry so every runner writes the same ones once).
 */
export function slotsToUpload(input: {
  /** Unique per upload, so members never collide with an earlier upload's. */
  readonly batch: string;
  readonly grants: readonly LocalGrant[];
  readonly remnants: SlotLists | undefined;
  readonly peers: number;
  readonly now: number;
}): SlotUpload {
  const live = input.grants.filter((g) => g.expiry > input.now);
  const used = live.map((g, i) => ({ ...g, member: `f:${input.batch}:${i}` }));
  const phantom: Array<{ bucket: Bucket; expiry: number; member: string }> = [];
  for (let copy = 1; copy < input.peers; copy += 1) {
    live.forEach((g, i) => {
      phantom.push({ ...g, member: `e:${input.batch}:${i}:${copy}` });
    });
  }
  for (const bucket of BUCKETS) {
    const seen = new Map<number, number>();
    for (const expiry of input.remnants?.[bucket] ?? []) {
      if (expiry <= input.now) continue;
      const rounded = Math.round(expiry / 10) * 10;
      const k = (seen.get(rounded) ?? 0) + 1;
      seen.set(rounded, k);
      phantom.push({ bucket, expiry, member: `m:${rounded}:${k}` });
    }
  }
  return { used, phantom };
}
