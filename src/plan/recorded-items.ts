/**
 * The (key, request hash) pairs a job's journal records, compactly: a sorted
 * array of 32-bit fingerprints, a small fraction of the records' memory. `plan` reads them before it scans a job, so it can keep, as
 * it scans, the first item of each price class the next run surely makes and
 * quote it without scanning a 100,000-row job again.
 *
 * "Surely makes" is `desiredState`'s rule (`ownVerdict`): an item with no
 * record with its request hash has no latest record, or one with another
 * hash, so it is 'new' or 'changed' whatever the record's run, state, review
 * or source. A fingerprint may collide (the item then only looks recorded,
 * and is not taken as surely made); it never misses a recorded pair.
 */
export class RecordedItems {
  readonly #fingerprints: Uint32Array;

  private constructor(fingerprints: Uint32Array) {
    this.#fingerprints = fingerprints;
  }

  /** The pairs `each` gives (every record will do: the latest ones are among them). */
  static of(
    each: (onRecord: (itemKey: string, requestHash: string) => void) => void,
  ): RecordedItems {
    let fingerprints = new Uint32Array(1024);
    let count = 0;
    each((itemKey, requestHash) => {
      if (count === fingerprints.length) {
        const grown = new Uint32Array(count * 2);
        grown.set(fingerprints);
        fingerprints = grown;
      }
      fingerprints[count++] = fingerprint(itemKey, requestHash);
    });
    return new RecordedItems(fingerprints.slice(0, count).sort());
  }

  /** Nothing recorded (no journal yet): every item is surely made. */
  static readonly none = new RecordedItems(new Uint32Array(0));

  /**
   * False when no record of `itemKey` has `requestHash`: the next run surely
   * makes the item (new or changed). True may be a collision.
   */
  has(itemKey: string, requestHash: string): boolean {
    const wanted = fingerprint(itemKey, requestHash);
    const all = this.#fingerprints;
    let low = 0;
    let high = all.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((all[mid] ?? 0) < wanted) low = mid + 1;
      else high = mid;
    }
    return all[low] === wanted;
  }
}

/** FNV-1a (32 bits) of the key, a separator no key holds, and the hash. */
function fingerprint(itemKey: string, requestHash: string): number {
  let h = 0x811c9dc5;
  const text = `${itemKey}\n${requestHash}`;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
