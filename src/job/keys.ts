/**
 * Stable item keys. A key is a readable slug of the item's values plus a
 * short hash of (step id, values, repeat index), so it does not depend on the
 * item's position: adding CSV rows or matrix values leaves existing keys as
 * they were. Identical items (e.g. duplicate CSV rows) get an occurrence
 * ordinal in the hash: the first keeps the plain key, the second gets the
 * key for "occurrence 2", and so on, in file order.
 */
import { canonicalJson, sha256Hex } from '../shared/index.js';
import type { TemplateVars } from './types.js';

const SLUG_MAX = 40;

export function slugOf(vars: TemplateVars): string {
  const text = Object.keys(vars)
    .sort()
    .map((name) => String(vars[name]))
    .join('-')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return text.length <= SLUG_MAX ? text : text.slice(0, SLUG_MAX).replace(/-+$/, '');
}

/** The text an item key hashes; equal bases mean identical items. */
export function keyBasis(stepId: string, vars: TemplateVars, countIndex: number): string {
  // countIndex 0 is left out so that raising `count` keeps the first repeat's key.
  return canonicalJson(
    countIndex === 0 ? { s: stepId, v: vars } : { s: stepId, v: vars, n: countIndex },
  );
}

export function itemKey(basis: string, vars: TemplateVars, occurrence: number): string {
  const hashed = occurrence <= 1 ? basis : `${basis}#${occurrence}`;
  const hash = sha256Hex(hashed).slice(0, 10);
  const slug = slugOf(vars);
  // `join` makes one flat string: a template literal would keep a larger rope
  // of its parts, and a plan or a run holds every key.
  return slug ? [slug, hash].join('-') : hash;
}

/** A `from:` item: its source item's key and the source output it animates. */
export function chainKey(sourceKey: string, outputIndex: number, ownKey?: string): string {
  // Flat, as `itemKey`'s.
  const parts = [sourceKey, `o${outputIndex + 1}`];
  if (ownKey) parts.push(ownKey);
  return parts.join('.');
}

/**
 * An item's readable name (the `{name}` of file names): its values in job
 * order (not sorted like the key's slug), the repeat number when `count` > 1,
 * or `fallback` (the step id) for an item without values.
 */
export function nameOf(
  vars: TemplateVars,
  countIndex: number,
  count: number,
  fallback: string,
): string {
  const parts = Object.values(vars).map((value) => String(value));
  if (count > 1) parts.push(String(countIndex + 1));
  return parts.join(' ').trim() || fallback;
}

export function labelOf(vars: TemplateVars, countIndex: number, count: number): string {
  const parts = Object.keys(vars).map((name) => {
    const value = String(vars[name]);
    return `${name}=${value.length > 30 ? `${value.slice(0, 29)}…` : value}`;
  });
  if (count > 1) parts.push(`#${countIndex + 1}`);
  return parts.join(', ') || 'item';
}
