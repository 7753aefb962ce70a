/**
 * The one canonical JSON and content hash. Journals store these digests
 * (request hashes, influencer config hashes, contract hashes) and item keys
 * are derived from canonical JSON, so both must stay byte-for-byte what
 * release 0.1.0 wrote: test/shared/content-hash.test.ts pins them and
 * test/journal/old-release.test.ts resumes a journal that release wrote.
 */
import { hash } from 'node:crypto';

/**
 * JSON with object keys sorted by UTF-16 code units (integer-like keys
 * included, unlike a JSON.stringify replacer, which re-orders them), and
 * undefined properties left out, so equal values always give equal text.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  // A loop, not entries/filter/sort/map: every item of a job is hashed at
  // each check. `sort()` with no comparator orders by UTF-16 code units.
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length > 1) keys.sort();
  let text = '';
  for (const key of keys) {
    const field = record[key];
    if (field === undefined) continue;
    text += `${text === '' ? '' : ','}${quotedKey(key)}:${canonicalJson(field)}`;
  }
  return `{${text}}`;
}

/**
 * Field names as JSON string literals, kept: a job's items share a handful of
 * names (a row's columns, a request's fields), quoted once instead of once
 * per item. Bounded, so that arbitrary keys (a value's own objects) cannot
 * grow it without end.
 */
const quotedKeys = new Map<string, string>();
const MAX_QUOTED_KEYS = 4096;

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (quotedKeys.size < MAX_QUOTED_KEYS) quotedKeys.set(key, quoted);
  }
  return quoted;
}

/** Lower-case hex sha256 of bytes, or of a string's UTF-8 bytes. */
export function sha256Hex(text: string | Uint8Array): string {
  // The one-shot form: no Hash object per call (a job hashes each item's texts).
  return hash('sha256', text, 'hex');
}

/**
 * A text as a number: the first 52 bits of its sha256, exact in a double.
 * For what a long run holds one of per item or output (a Map of these holds
 * numbers, not strings). Two texts share a number only by a 52-bit hash
 * collision (a chance of 2^-52 for a given pair), so a caller uses it where
 * a collision would cost a slower path or a suffixed name, or where a full
 * digest was only ever a guard against the same mistake.
 */
export function hash52(text: string): number {
  return Number.parseInt(sha256Hex(text).slice(0, 13), 16);
}

/**
 * sha256 (hex) identifying a value: request, config and contract hashes.
 * What is hashed is the canonical JSON *as a JSON string literal* (quoted and
 * escaped): every journal so far stores digests of that text (the old call
 * sites wrote `contentHash(canonicalJson(x))` around a hash that serialised
 * again), so changing it would make every resumed run look edited.
 */
export function contentHash(value: unknown): string {
  return sha256Hex(JSON.stringify(canonicalJson(value)));
}

/**
 * Identifies an account without revealing its API key: the first 16 hex
 * characters of the key's sha256. Journals store it (inside asset and
 * influencer scopes) and shared rate limits are keyed by it, so every runner
 * of the account (CLI or library) must compute exactly this.
 */
export function accountFingerprint(apiKey: string): string {
  return sha256Hex(apiKey).slice(0, 16);
}
