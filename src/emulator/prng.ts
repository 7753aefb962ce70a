import { mulberry32 } from '../shared/prng.js';

/** A small seeded PRNG (mulberry32) so latencies, outcomes and faults replay under a seed. */
export class Prng {
  private readonly random: () => number;

  constructor(seed: number) {
    this.random = mulberry32(seed);
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.random();
  }

  /** Uniform in [min, max]. */
  between(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  /** 32 random hex digits. */
  hex(length: number): string {
    let out = '';
    while (out.length < length)
      out += Math.floor(this.next() * 0x100000000)
        .toString(16)
        .padStart(8, '0');
    return out.slice(0, length);
  }

  /** A version-4-shaped UUID. */
  uuid(): string {
    const h = this.hex(32);
    const variant = ((Number.parseInt(h[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
}

/** Independent streams, so adding a fault draw never shifts ids or latencies. */
export interface RandomStreams {
  readonly ids: Prng;
  readonly latency: Prng;
  readonly faults: Prng;
  readonly outcomes: Prng;
}

export function createStreams(seed: number): RandomStreams {
  return {
    ids: new Prng(seed ^ 0x1d5),
    latency: new Prng(seed ^ 0x2a7c),
    faults: new Prng(seed ^ 0x3f11),
    outcomes: new Prng(seed ^ 0x4b93),
  };
}
