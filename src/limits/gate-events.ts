/** Events a rate gate emits, for logs, the journal's timeline and progress lines. */
import type { Bucket } from '../contract/index.js';

export interface GateEvents {
  /** Every bucket is paused until `until` (ms epoch); emitted again when extended. */
  pause: {
    readonly until: number;
    readonly reason: 'rate_limited' | 'restored';
    readonly retryAfterMs?: number;
  };
  /** Slots were taken in `buckets`, stamped `at` (the gate's clock): the send may go now. */
  grant: { readonly buckets: readonly Bucket[]; readonly at: number };
  /** The pause ended. */
  resume: { readonly at: number };
  /** An acquire has to wait (limits reached, a pause, or earlier waiters). */
  wait: {
    readonly buckets: readonly Bucket[];
    readonly waiting: number;
    readonly pausedUntil: number | null;
  };
  /** `X-RateLimit-Remaining` showed someone else using the account: our allowance shrank. */
  shrink: { readonly bucket: Bucket; readonly phantoms: number; readonly remaining: number };
  /**
   * Redis gates only: the limits store changed, `local` when Redis became
   * unreachable (conservative local limits), `shared` when it answered again.
   */
  store: { readonly mode: 'shared' | 'local'; readonly reason?: string };
}

export type GateEventName = keyof GateEvents;
export type GateListener<E extends GateEventName> = (event: GateEvents[E]) => void;

/** The listener registry both gates use. */
export class GateEmitter {
  readonly #listeners = new Map<GateEventName, Set<(event: never) => void>>();

  on<E extends GateEventName>(event: E, listener: GateListener<E>): () => void {
    let set = this.#listeners.get(event);
    if (!set) {
      set = new Set();
      this.#listeners.set(event, set);
    }
    set.add(listener as (event: never) => void);
    return () => set.delete(listener as (event: never) => void);
  }

  emit<E extends GateEventName>(event: E, payload: GateEvents[E]): void {
    for (const listener of this.#listeners.get(event) ?? []) (listener as GateListener<E>)(payload);
  }

  clear(): void {
    this.#listeners.clear();
  }
}
