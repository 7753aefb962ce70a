/**
 * Makes any string (a server-provided id, a prompt-derived label, a matrix
 * value) safe to use as ONE path segment on Linux, macOS and Windows:
 * no separators, no `..`, no control or invisible characters, no reserved
 * Windows names or characters, no leading dot (hidden files), bounded length.
 */
import { sha256Hex } from '../shared/index.js';

/** Longest segment in UTF-8 bytes; 255 is the usual filesystem limit, leave room for `.part-` temp names. */
export const MAX_SEGMENT_BYTES = 120;

// Windows device names, also reserved with any extension (`CON.txt`) and with superscript digits.
const RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?$/i;
// Path separators and characters Windows refuses, plus `%` and `#` which
// would be decoded or cut when the path is used in a report link.
const UNSAFE_CHARS = /[<>:"/\\|?*%#]/g;
// Control characters (Cc) and invisible format characters (Cf: bidi overrides, zero-width).
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * Sanitises one path segment. NFKC first so look-alikes (`／`, `．`, `⁄`) fold
 * into the characters they mimic and are then replaced. Overlong results are
 * truncated with a short hash of the original so distinct inputs stay distinct;
 * an extension (`.png`) is kept on truncation. Empty results become `_`.
 */
export function sanitizeSegment(raw: string): string {
  let s = raw.normalize('NFKC').replace(INVISIBLE, '');
  s = s.replace(/[\u2044\u2215\u29f8\u29f9]/g, '_').replace(UNSAFE_CHARS, '_');
  s = s.trim().replace(/[. ]+$/, '');
  s = s.replace(/^\.+/, (dots) => '_'.repeat(dots.length));
  if (s === '') return '_';
  if (RESERVED.test(s)) s = `_${s}`;
  return truncateSegment(s, raw);
}

/**
 * A readable file-name segment from free text (an item's values): NFC,
 * lower case, letters, marks and digits of any script kept (`café`, `東京`),
 * every other run of characters (spaces, punctuation, anything unsafe) one
 * `-`; then {@link sanitizeSegment} bounds it like any other segment.
 */
export function readableSegment(text: string): string {
  const words = text
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '');
  return sanitizeSegment(words);
}

function truncateSegment(s: string, original: string): string {
  if (Buffer.byteLength(s, 'utf8') <= MAX_SEGMENT_BYTES) return s;
  const hash = sha256Hex(original).slice(0, 8);
  const dot = s.lastIndexOf('.');
  const ext = dot > 0 && s.length - dot <= 10 ? s.slice(dot) : '';
  const budget = MAX_SEGMENT_BYTES - Buffer.byteLength(`-${hash}${ext}`, 'utf8');
  return `${cutToBytes(s.slice(0, s.length - ext.length), budget)}-${hash}${ext}`;
}

/** Longest prefix of whole code points that fits in `maxBytes` UTF-8 bytes. */
function cutToBytes(s: string, maxBytes: number): string {
  let out = '';
  let used = 0;
  for (const ch of s) {
    const size = Buffer.byteLength(ch, 'utf8');
    if (used + size > maxBytes) break;
    out += ch;
    used += size;
  }
  return out.replace(/[. ]+$/, '');
}
