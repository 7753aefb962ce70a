/**
 * The Redis gate's local picture of the account's slots in Redis (refreshed
 * from script replies, plus our own grants in between), used for
 * `snapshot()`, to skip needless `shrink` calls, and to seed the local
 * fallback gate so it starts from what was already spent.
 */
import { BUCKETS, type Bucket, type RateLimits } from '../../contract/index.js';
import type { BucketSnapshot, GateSnapshot } from '../local-gate.js';
import type { SlotLists, SlotUpload } from './store.js';

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

  /** A gate snapshot of this picture (the caller sets `pausedUntil` and `waiting`). */
  gateSnapshot(limits: RateLimits, now: number): GateSnapshot {
    const buckets = {} as Record<Bucket, BucketSnapshot>;
    for (const bucket of BUCKETS) buckets[bucket] = this.snapshot(bucket, limits, now);
    return { at: now, pausedUntil: null, waiting: 0, buckets };
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
 * What to write back when Redis answers again: our local grants; for every
 * other assumed peer its whole local allowance, live for a full slot life
 * from now (their grants are not in Redis until they reconnect too, and may
 * be anywhere in the last window); and the slots we held as taken when Redis
 * went away (a restarted Redis has lost them; members derived from the
 * expiry so runners with the same picture write them once).
 */
export function slotsToUpload(input: {
  /** Unique per upload, so members never collide with an earlier upload's. */
  readonly batch: string;
  readonly grants: readonly LocalGrant[];
  readonly remnants: SlotLists | undefined;
  readonly peers: number;
  readonly peerAllowance: (bucket: Bucket) => number;
  readonly slotLifeMs: (bucket: Bucket) => number;
  readonly now: number;
}): SlotUpload {
  const live = input.grants.filter((g) => g.expiry > input.now);
  const used = live.map((g, i) => ({ ...g, member: `f:${input.batch}:${i}` }));
  const phantom: Array<{ bucket: Bucket; expiry: number; member: string }> = [];
  for (const bucket of BUCKETS) {
    const reserved = (input.peers - 1) * input.peerAllowance(bucket);
    const expiry = input.now + input.slotLifeMs(bucket);
    for (let i = 0; i < reserved; i += 1) {
      phantom.push({ bucket, expiry, member: `e:${input.batch}:${bucket}:${i}` });
    }
    const seen = new Map<number, number>();
    for (const remnant of input.remnants?.[bucket] ?? []) {
      if (remnant <= input.now) continue;
      const rounded = Math.round(remnant / 10) * 10;
      const k = (seen.get(rounded) ?? 0) + 1;
      seen.set(rounded, k);
      phantom.push({ bucket, expiry: remnant, member: `m:${rounded}:${k}` });
    }
  }
  return { used, phantom };
}

/**
 * The slots a runner must hold as taken when Redis goes away: the live ones
 * it knows of, and since its picture may be stale (others granted since),
 * the rest of each bucket as taken for a full slot life from now.
 */
export function occupiedAtOutage(
  known: SlotLists,
  limits: RateLimits,
  slotLifeMs: (bucket: Bucket) => number,
  now: number,
): SlotLists {
  const occupied = {} as SlotLists;
  for (const bucket of BUCKETS) {
    const unknown = Math.max(0, limits[bucket].count - known[bucket].length);
    const expiry = now + slotLifeMs(bucket);
    occupied[bucket] = [...known[bucket], ...Array.from({ length: unknown }, () => expiry)];
  }
  return occupied;
}
