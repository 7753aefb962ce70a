/**
 * JPEG and WebP outputs (`imageFormat`, options.ts), built from the
 * generation id like the PNG so every generation has its own bytes, with no
 * image library: a 16x16 greyscale baseline JFIF whose four 8x8 blocks are
 * flat (DC coefficients only) plus a COM segment naming the generation, and
 * a 16x16 single-colour lossless WebP (VP8L) whose five prefix codes each
 * hold one symbol, so the pixel data takes no bits at all.
 */
import { createHash } from 'node:crypto';
import { jpegSegment, riffChunk, webpContainer } from '../media/index.js';

const digestOf = (id: string): Buffer => createHash('sha256').update(id).digest();

/** Writes bits most significant first, stuffing a 0x00 after each 0xff (JPEG). */
class JpegBits {
  readonly #bytes: number[] = [];
  #acc = 0;
  #count = 0;
  put(value: number, length: number): void {
    for (let i = length - 1; i >= 0; i--) {
      this.#acc = (this.#acc << 1) | ((value >> i) & 1);
      if (++this.#count === 8) this.#flush();
    }
  }
  #flush(): void {
    this.#bytes.push(this.#acc);
    if (this.#acc === 0xff) this.#bytes.push(0);
    this.#acc = 0;
    this.#count = 0;
  }
  end(): Buffer {
    while (this.#count !== 0) this.put(1, 1);
    return Buffer.from(this.#bytes);
  }
}

/** The standard luminance DC table (ITU T.81 K.3): code lengths per category 0..11. */
const DC_BITS = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0];
const DC_CODES: readonly (readonly [number, number])[] = [
  [0b00, 2],
  [0b010, 3],
  [0b011, 3],
  [0b100, 3],
  [0b101, 3],
  [0b110, 3],
  [0b1110, 4],
  [0b11110, 5],
  [0b111110, 6],
  [0b1111110, 7],
  [0b11111110, 8],
  [0b111111110, 9],
];

/** A 16x16 greyscale baseline JPEG with four flat blocks whose greys derive from `id`. */
export function jpegFor(id: string): Buffer {
  const h = digestOf(id);
  const jfif = Buffer.from([0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const dqt = Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)]);
  const sof = Buffer.from([8, 0, 16, 0, 16, 1, 1, 0x11, 0]);
  const dht = Buffer.concat([
    Buffer.from([0x00, ...DC_BITS, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]),
    // AC table 0: one code, `0`, for end-of-block: every AC coefficient is zero.
    Buffer.from([0x10, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00]),
  ]);
  const sos = Buffer.from([1, 1, 0x00, 0, 63, 0]);
  const bits = new JpegBits();
  let previous = 0;
  for (let block = 0; block < 4; block++) {
    // DC of a flat block with quantiser 1: 8 x (grey - 128).
    const dc = 8 * ((h[block] ?? 0) - 128);
    const diff = dc - previous;
    previous = dc;
    const category = diff === 0 ? 0 : Math.floor(Math.log2(Math.abs(diff))) + 1;
    const [code, length] = DC_CODES[category] ?? [0, 2];
    bits.put(code, length);
    if (category > 0) bits.put(diff > 0 ? diff : diff - 1 + (1 << category), category);
    bits.put(0, 1); // end of block
  }
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    jpegSegment(0xe0, jfif),
    jpegSegment(0xfe, Buffer.from(`ibatch emulator ${id}`, 'utf8')),
    jpegSegment(0xdb, dqt),
    jpegSegment(0xc0, sof),
    jpegSegment(0xc4, dht),
    jpegSegment(0xda, sos),
    bits.end(),
    Buffer.from([0xff, 0xd9]),
  ]);
}

/** Writes bits least significant first (VP8L). */
class LsbBits {
  readonly #bytes: number[] = [];
  #acc = 0;
  #count = 0;
  put(value: number, length: number): void {
    for (let i = 0; i < length; i++) {
      this.#acc |= ((value >> i) & 1) << this.#count;
      if (++this.#count === 8) {
        this.#bytes.push(this.#acc);
        this.#acc = 0;
        this.#count = 0;
      }
    }
  }
  end(): Buffer {
    if (this.#count > 0) this.#bytes.push(this.#acc);
    return Buffer.from(this.#bytes);
  }
}

/** A 16x16 lossless WebP (simple format) of one opaque colour derived from `id`. */
export function webpFor(id: string): Buffer {
  const h = digestOf(id);
  const bits = new LsbBits();
  bits.put(0x2f, 8); // VP8L signature
  bits.put(15, 14); // width - 1
  bits.put(15, 14); // height - 1
  bits.put(0, 1); // alpha unused
  bits.put(0, 3); // version
  bits.put(0, 1); // no transform
  bits.put(0, 1); // no colour cache
  bits.put(0, 1); // no meta prefix codes
  // Green, red, blue, alpha: one 8-bit symbol each (a simple code).
  for (const symbol of [h[1] ?? 0, h[0] ?? 0, h[2] ?? 0, 255]) {
    bits.put(1, 1);
    bits.put(0, 1);
    bits.put(1, 1);
    bits.put(symbol, 8);
  }
  // Distance: one 1-bit symbol (never read: no back-references).
  bits.put(0b0001, 4);
  const vp8l = bits.end();
  return webpContainer(riffChunk('VP8L', vp8l));
}
