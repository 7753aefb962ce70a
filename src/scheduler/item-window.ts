/**
 * Starts a run's generation items lazily, a window over their order: at most
 * `bound` items are between their start and their create (inputs resolved,
 * quoted, queued for the rate gate) at once, and each that gets past its
 * create, or ends, lets the next one in. Starting every item at once would
 * keep one waiting task per item in the create queue, and make a resume read
 * every item before its first create.
 *
 * An item whose inputs are not there yet (its `from:` source, its training)
 * is parked beside the window, not in it: the window keeps filling with ready
 * items, and a parked one goes in first once what it waits for settles; so
 * does an item going back to its create (a retry).
 */

/** An item's place in the window, handed to the task that drives it. */
export interface WindowSlot {
  /** The item's create is answered, or it needs no create: the next item may start. Idempotent. */
  leave(): void;
  /** The item goes back to its create stage (a retry): resolves once it has a place again. */
  enter(): Promise<void>;
}

export interface ItemWindowOptions<T> {
  /** Most items started and not past their create at once. */
  readonly bound: number;
  /** Drives one item; calls `slot.leave()` once its create is answered (ending leaves too). */
  readonly drive: (entry: T, slot: WindowSlot) => Promise<void>;
  /** What the item waits for before it can be sent, or undefined when it has it. */
  readonly blocker: (entry: T) => Promise<unknown> | undefined;
  /**
   * Most items taken from the order and waiting beside the window (parked,
   * or released and not started yet): past it no more are taken until some
   * start. What they wait for was taken before them (a source comes earlier
   * in the order) or is no entry (a training), so nothing waits for an item
   * not taken. @default no limit
   */
  readonly maxWaiting?: number;
  /**
   * True while no new item may be taken from the order (what items already
   * made wait for downstream is full); `wake()` once it may again. Items
   * already taken (retries, parked ones released) still go in. @default never
   */
  readonly held?: () => boolean;
}

/**
 * How many items a run keeps started ahead of their creates: enough that the
 * rate gate always has creates waiting when a slot frees up (two windows'
 * worth of the generations bucket, which binds first, and never fewer than a
 * few per create-queue place), never the whole run.
 */
export function itemWindowBound(generationsPerWindow: number, createConcurrency: number): number {
  return Math.max(2 * generationsPerWindow, 4 * createConcurrency, 16);
}

/**
 * Most outputs a run lets wait for their download before it takes no new
 * item from its order (`ItemWindowOptions.held`): four windows' worth. An
 * assumption, not a measure: while the run holds, the items already in the
 * window keep the rate gate busy, so a burst of completions (one history
 * poll settles up to 50) does not idle it; a backlog past it says the
 * downloads do not keep up, and new items would only add to what waits.
 */
export function downloadBacklogBound(windowBound: number): number {
  return 4 * windowBound;
}

/** A retry waiting for its place again (told apart from an entry by its class). */
class Retry {
  constructor(readonly resume: () => void) {}
}

export class ItemWindow<T> {
  readonly #options: ItemWindowOptions<T>;
  #entries: Iterator<T> | undefined;
  /**
   * Items that go before the next of the order: retries (their resumption)
   * and parked items whose inputs settled (the entry itself: no closure per
   * item, however many a settled training releases).
   */
  readonly #ready: Array<T | Retry> = [];
  #readyHead = 0;
  /** Parked items by what they wait for: one reaction per blocker, not per item. */
  readonly #parked = new Map<Promise<unknown>, T[]>();
  #inside = 0;
  /** Entries taken from the order that wait beside the window (parked or ready). */
  #waiting = 0;
  #running = 0;
  #peak = 0;
  #failed = false;
  #filling = false;
  #finish: { resolve(): void; reject(error: unknown): void } | undefined;

  constructor(options: ItemWindowOptions<T>) {
    this.#options = options;
  }

  /** Items started and not past their create now. */
  get inside(): number {
    return this.#inside;
  }

  /** The most items that were ever started and not past their create at once. */
  get peak(): number {
    return this.#peak;
  }

  /** Takes items from the order again after `held` turned false. */
  wake(): void {
    if (this.#finish) this.#fill();
  }

  /** Drives every entry; resolves once each has ended, rejects with the first task's error. */
  run(entries: Iterable<T>): Promise<void> {
    this.#entries = entries[Symbol.iterator]();
    const done = new Promise<void>((resolve, reject) => {
      this.#finish = { resolve, reject };
    });
    this.#fill();
    return done;
  }

  #fill(): void {
    // An item that leaves while the loop launches it (a resumed item already
    // created goes straight to its outcome) frees a place the loop sees: no
    // recursion, however many leave in a row.
    if (this.#filling) return;
    this.#filling = true;
    try {
      this.#fillLoop();
    } finally {
      this.#filling = false;
    }
    this.#settleIfDone();
  }

  #fillLoop(): void {
    while (!this.#failed && this.#inside < this.#options.bound) {
      if (this.#readyHead < this.#ready.length) {
        const waiting = this.#takeReady();
        this.#enter();
        if (waiting instanceof Retry) waiting.resume();
        else {
          this.#waiting -= 1;
          this.#launch(waiting);
        }
        continue;
      }
      if (this.#waiting >= (this.#options.maxWaiting ?? Number.POSITIVE_INFINITY)) break;
      if (this.#options.held?.()) break;
      const next = this.#next();
      if (!next || next.done) {
        this.#entries = undefined;
        break;
      }
      const blocker = this.#options.blocker(next.value);
      if (blocker) {
        this.#waiting += 1;
        this.#park(blocker, next.value);
      } else {
        this.#enter();
        this.#launch(next.value);
      }
    }
  }

  /**
   * The next entry of the order. One that cannot be had (the entries are
   * read as the window goes: the job file may have become unreadable) ends
   * the run like a failed task, not as an error thrown into a callback.
   */
  #next(): IteratorResult<T> | undefined {
    try {
      return this.#entries?.next();
    } catch (error) {
      this.#entries = undefined;
      this.#failed = true;
      this.#finish?.reject(error);
      return undefined;
    }
  }

  #enter(): void {
    this.#inside += 1;
    this.#peak = Math.max(this.#peak, this.#inside);
  }

  /** The first ready item (there is one). */
  #takeReady(): T | Retry {
    const waiting = this.#ready[this.#readyHead] as T | Retry;
    this.#readyHead += 1;
    if (this.#readyHead === this.#ready.length) {
      this.#ready.length = 0;
      this.#readyHead = 0;
    }
    return waiting;
  }

  #park(blocker: Promise<unknown>, entry: T): void {
    const parked = this.#parked.get(blocker);
    if (parked) {
      parked.push(entry);
      return;
    }
    this.#parked.set(blocker, [entry]);
    const release = () => {
      const items = this.#parked.get(blocker) ?? [];
      this.#parked.delete(blocker);
      // An item may wait for more than one thing (a source and a training).
      for (const item of items) {
        const next = this.#options.blocker(item);
        if (next) this.#park(next, item);
        else this.#ready.push(item);
      }
      this.#fill();
    };
    // Failed inputs too: the item's own task records why it cannot be made.
    blocker.then(release, release);
  }

  #launch(entry: T): void {
    this.#running += 1;
    let inside = true;
    const slot: WindowSlot = {
      leave: () => {
        if (!inside) return;
        inside = false;
        this.#inside -= 1;
        this.#fill();
      },
      enter: () =>
        new Promise<void>((resolve) => {
          this.#ready.push(
            new Retry(() => {
              inside = true;
              resolve();
            }),
          );
          this.#fill();
        }),
    };
    this.#options.drive(entry, slot).then(
      () => {
        this.#running -= 1;
        slot.leave();
        this.#settleIfDone();
      },
      (error: unknown) => {
        this.#running -= 1;
        // As Promise.all over the items did: the run ends with the first error.
        this.#failed = true;
        this.#finish?.reject(error);
      },
    );
  }

  #settleIfDone(): void {
    if (this.#failed || this.#entries || this.#running > 0 || this.#parked.size > 0) return;
    if (this.#readyHead < this.#ready.length) return;
    this.#finish?.resolve();
  }
}
