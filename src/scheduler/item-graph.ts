/**
 * Lets an item wait for exactly what it needs (its source item's outputs, a
 * trained influencer), so it starts as soon as its own inputs exist rather
 * than when a whole step ends.
 */

import { EXIT } from '../shared/exit-codes.js';
import { IbatchError } from '../shared/index.js';

/** Something an item depends on failed: the item is skipped with this reason. */
export class DependencyFailedError extends IbatchError {
  constructor(message: string) {
    super('dependency_failed', message, EXIT.itemsFailed);
  }
}

export interface SourceOutputs {
  /** Generation id of each output, in output order. */
  readonly generationIds: readonly string[];
}

interface Deferred<T> {
  readonly promise: Promise<T>;
  readonly settled: boolean;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let res!: (value: T) => void;
  let rej!: (error: unknown) => void;
  const promise = new Promise<T>((resolve, reject) => {
    res = resolve;
    rej = reject;
  });
  // A dependency nobody waits for must not become an unhandled rejection.
  promise.catch(() => undefined);
  const slot = {
    promise,
    settled: false,
    resolve(value: T) {
      slot.settled = true;
      res(value);
    },
    reject(error: unknown) {
      slot.settled = true;
      rej(error);
    },
  };
  return slot;
}

export class ItemGraph {
  readonly #outputs = new Map<string, Deferred<SourceOutputs>>();
  #abandoned: unknown;

  /**
   * @param sources the items some item waits on: the outcomes of only these
   * are kept (a 20,000-item run without `from:` kept 20,000 settled promises).
   */
  constructor(private readonly sources: ReadonlySet<string>) {}

  #slot(itemKey: string): Deferred<SourceOutputs> {
    let slot = this.#outputs.get(itemKey);
    if (!slot) {
      slot = deferred();
      this.#outputs.set(itemKey, slot);
      if (this.#abandoned !== undefined) slot.reject(this.#abandoned);
    }
    return slot;
  }

  /** Resolves when the item succeeded; rejects with DependencyFailedError otherwise. */
  outputsOf(itemKey: string): Promise<SourceOutputs> {
    return this.#slot(itemKey).promise;
  }

  /** Whether the item's outcome is known (`outputsOf` settled or about to). */
  isSettled(itemKey: string): boolean {
    return this.#outputs.get(itemKey)?.settled === true;
  }

  succeeded(itemKey: string, outputs: SourceOutputs): void {
    if (this.sources.has(itemKey)) this.#slot(itemKey).resolve(outputs);
  }

  failed(itemKey: string, reason: string): void {
    if (this.sources.has(itemKey)) this.#slot(itemKey).reject(new DependencyFailedError(reason));
  }

  /** Releases every waiter when the run stops (the waiting items stay pending). */
  abandon(error: unknown): void {
    this.#abandoned = error;
    for (const slot of this.#outputs.values()) slot.reject(error);
  }
}
