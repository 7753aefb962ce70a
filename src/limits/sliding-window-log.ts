/**
 * One bucket's sliding-window log: the expiry time of every slot granted in
 * the last window. At most `count` live slots at any instant means no more
 * than `count` grants in ANY window of `windowMs`, whatever algorithm (fixed
 * or sliding) the service uses. Each slot lives `windowMs + marginMs` so
 * network jitter between our send and the service's arrival stamp cannot
 * squeeze an extra request into the service's window.
 *
 * Phantom slots stand for requests someone else (a teammate on the dashboard)
 * made on the same account; they expire like ours.
 */
export class SlidingWindowLog {
  readonly count: number;
  readonly windowMs: number;
  readonly marginMs: number;
  /** Expiry times of our own slots, ascending. */
  #own: number[] = [];
  /** Expiry times of phantom slots, ascending. */
  #phantom: number[] = [];
  /** Expiry times of our slots whose request has not been answered yet, ascending. */
  #unanswered: number[] = [];

  constructor(count: number, windowMs: number, marginMs: number) {
    this.count = count;
    this.windowMs = windowMs;
    this.marginMs = marginMs;
  }

  #prune(now: number): void {
    while (this.#own.length > 0 && this.#own[0]! <= now) this.#own.shift();
    while (this.#phantom.length > 0 && this.#phantom[0]! <= now) this.#phantom.shift();
  }

  /** Our slots still live at `now`. */
  used(now: number): number {
    this.#prune(now);
    return this.#own.length;
  }

  phantoms(now: number): number {
    this.#prune(now);
    return this.#phantom.length;
  }

  free(now: number): number {
    this.#prune(now);
    return Math.max(0, this.count - this.#own.length - this.#phantom.length);
  }

  /** Earliest time at which `needed` slots are free (now if they already are). */
  freeAt(now: number, needed: number): number {
    this.#prune(now);
    // Phantoms can push the live slots past the count: all of the excess must expire too.
    const mustExpire = this.#own.length + this.#phantom.length - (this.count - needed);
    if (mustExpire <= 0) return now;
    const expiries = [...this.#own, ...this.#phantom].sort((a, b) => a - b);
    return expiries[Math.min(mustExpire, expiries.length) - 1] ?? now;
  }

  take(now: number): void {
    const expiry = now + this.windowMs + this.marginMs;
    this.#insert(this.#own, expiry);
    this.#unanswered.push(expiry);
  }

  /**
   * The service answered one of our requests at `now`, so it counted it at or
   * before `now`. A request can reach the service long after its slot was
   * granted (the event loop busy with journal commits between the grant and
   * the socket write, or an in-process service reading it late): re-stamp
   * the earliest unanswered slot to `now` so it lives a whole window past
   * the latest moment the service can have counted it. Slots only get
   * longer, never shorter.
   */
  confirm(now: number): void {
    while (this.#unanswered.length > 0 && this.#unanswered[0]! <= now) this.#unanswered.shift();
    const expiry = this.#unanswered.shift();
    if (expiry === undefined) return;
    const restamped = now + this.windowMs + this.marginMs;
    if (restamped <= expiry) return;
    const index = this.#own.indexOf(expiry);
    if (index < 0) return;
    this.#own.splice(index, 1);
    this.#insert(this.#own, restamped);
  }

  /** Adds phantom slots, stamped now (we do not know when the others were sent). */
  addPhantoms(now: number, n: number): void {
    for (let i = 0; i < n; i += 1) this.#insert(this.#phantom, now + this.windowMs + this.marginMs);
  }

  /** Adds one phantom slot expiring at `expiry` (a slot someone else took earlier). */
  addPhantomUntil(expiry: number): void {
    this.#insert(this.#phantom, expiry);
  }

  #insert(list: number[], expiry: number): void {
    // Append in the common case; keep order if the clock stepped back.
    let index = list.length;
    while (index > 0 && list[index - 1]! > expiry) index -= 1;
    list.splice(index, 0, expiry);
  }
}
