/**
 * Turns the bytes of a job or rows file into text without ever guessing: a
 * byte-order mark decides (UTF-8, UTF-16 LE or BE), otherwise the named
 * encoding, otherwise strict UTF-8. Bytes that do not decode are an error
 * with the line and column where they are, never a silent U+FFFD: a
 * replaced character would reach a paid prompt.
 */
import { isUtf8 } from 'node:buffer';

/** Bytes that are not text in the expected encoding, at a 1-based line and column. */
export class TextDecodeProblem extends Error {
  constructor(
    readonly reason: string,
    readonly line: number,
    readonly col: number,
    /** The file looks like UTF-16 without a byte-order mark. */
    readonly looksUtf16 = false,
  ) {
    super(`line ${line}, column ${col}: ${reason}`);
  }
}

const BOMS: readonly { readonly bytes: readonly number[]; readonly encoding: string }[] = [
  { bytes: [0xef, 0xbb, 0xbf], encoding: 'utf-8' },
  { bytes: [0xff, 0xfe], encoding: 'utf-16le' },
  { bytes: [0xfe, 0xff], encoding: 'utf-16be' },
];

/** The encoding a byte-order mark at the start of `bytes` names, if any. */
function bomEncoding(bytes: Uint8Array): { encoding: string; length: number } | undefined {
  const bom = BOMS.find((b) => b.bytes.every((byte, i) => bytes[i] === byte));
  return bom ? { encoding: bom.encoding, length: bom.bytes.length } : undefined;
}

/** Whether `label` names an encoding this Node can decode (`windows-1252`, `latin1`, ...). */
export function isKnownEncoding(label: string): boolean {
  try {
    new TextDecoder(label);
    return true;
  } catch {
    return false;
  }
}

/**
 * Decodes `bytes`: a BOM wins over `encoding` (it cannot be wrong about the
 * file it starts); without either, UTF-8. Throws {@link TextDecodeProblem}.
 * The BOM is not part of the text.
 */
export function decodeText(bytes: Uint8Array, encoding?: string): string {
  const bom = bomEncoding(bytes);
  const body = bom ? bytes.subarray(bom.length) : bytes;
  const label = bom?.encoding ?? encoding ?? 'utf-8';
  const utf8 = new TextDecoder(label).encoding === 'utf-8';
  if (utf8) {
    // UTF-16 text is mostly NULs and letters to a UTF-8 reader: say what it is
    // rather than point at its first non-ASCII character.
    if (!bom && encoding === undefined) {
      const nul = body.indexOf(0);
      if (nul >= 0) throw nulProblem(body, nul);
    }
    if (!isUtf8(body)) throw utf8Problem(body);
    return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  }
  try {
    return new TextDecoder(label, { fatal: true, ignoreBOM: true }).decode(body);
  } catch {
    // The decoder does not say where it failed; the first replacement character
    // of a lenient decode does (a file of this encoding cannot hold U+FFFD itself
    // unless the encoding is a Unicode one, where the two agree anyway).
    const lenient = new TextDecoder(label, { ignoreBOM: true }).decode(body);
    const at = lenient.indexOf('\uFFFD');
    const { line, col } = positionAtEnd(lenient.slice(0, Math.max(at, 0)));
    throw new TextDecodeProblem(`bytes that are not ${label}`, line, col);
  }
}

function utf8Problem(body: Uint8Array): TextDecodeProblem {
  const at = firstInvalidUtf8(body);
  const { line, col } = positionAtEnd(Buffer.from(body.subarray(0, at)).toString('utf8'));
  return new TextDecodeProblem(`byte ${hexByte(body[at] ?? 0)} is not UTF-8`, line, col);
}

function nulProblem(body: Uint8Array, nul: number): TextDecodeProblem {
  const prefix = body.subarray(0, nul);
  const { line, col } = isUtf8(prefix)
    ? positionAtEnd(Buffer.from(prefix).toString('utf8'))
    : { line: 1, col: 1 };
  // ASCII as UTF-16 LE is `X 00 X 00`, as BE `00 X 00 X`.
  const order = nul % 2 === 1 ? 'LE' : 'BE';
  return new TextDecodeProblem(
    `a NUL byte: this looks like UTF-16 ${order} without a byte-order mark`,
    line,
    col,
    true,
  );
}

function hexByte(byte: number): string {
  return `0x${byte.toString(16).toUpperCase().padStart(2, '0')}`;
}

/** Offset of the first byte that does not start or continue a valid UTF-8 sequence. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const length = utf8SequenceLength(bytes, i);
    if (length === 0) return i;
    i += length;
  }
  return i;
}

/** Length of the valid UTF-8 sequence at `i`, 0 when there is none (RFC 3629 table). */
function utf8SequenceLength(bytes: Uint8Array, i: number): number {
  const b0 = bytes[i] ?? 0;
  if (b0 < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => {
    const b = bytes[i + k];
    return b !== undefined && b >= lo && b <= hi;
  };
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(1) ? 2 : 0;
  if (b0 >= 0xe0 && b0 <= 0xef) {
    const lo = b0 === 0xe0 ? 0xa0 : 0x80;
    const hi = b0 === 0xed ? 0x9f : 0xbf;
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    const lo = b0 === 0xf0 ? 0x90 : 0x80;
    const hi = b0 === 0xf4 ? 0x8f : 0xbf;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/**
 * The 1-based line and column just after `prefix` (CRLF, CR or LF end a
 * line, as in the CSV reader; columns count UTF-16 code units, as it does).
 */
function positionAtEnd(prefix: string): { line: number; col: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < prefix.length; i++) {
    const c = prefix.charCodeAt(i);
    if (c === 0x0a || (c === 0x0d && prefix.charCodeAt(i + 1) !== 0x0a)) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, col: prefix.length - lineStart + 1 };
}
