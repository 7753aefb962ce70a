/** HTML escaping, safe local links and CSP hashes for the report and the review page. */
import { createHash } from 'node:crypto';

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Escapes text for element content and quoted attribute values alike. */
export function escapeHtml(value: unknown): string {
  const text = String(value ?? '');
  // Most values (a report writes several per row of 100,000) have nothing to escape.
  return SPECIAL.test(text) ? text.replace(SPECIALS, (ch) => ENTITIES[ch] ?? ch) : text;
}
const SPECIAL = /[&<>"'`]/;
const SPECIALS = /[&<>"'`]/g;

/**
 * A manifest `file` as a relative URL, or undefined when it is not a plain
 * relative path inside the output folder (absolute, `..`, empty segments).
 * Each segment is percent-encoded so `%2e%2e`, `#` or `?` in a name cannot be
 * decoded by the browser into something else.
 */
export function localHref(file: string | undefined): string | undefined {
  if (!file || file.includes('\0') || file.includes('\\')) return undefined;
  const segments = file.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..') || /^[a-z]+:/i.test(file)) {
    return undefined;
  }
  return segments.map(encodeURIComponent).join('/');
}

/** Tagged template that escapes every interpolated value unless it is `raw`. */
export interface RawHtml {
  readonly __html: string;
}
export const raw = (html: string): RawHtml => ({ __html: html });

export function html(strings: TemplateStringsArray, ...values: unknown[]): RawHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += renderValue(value) + (strings[i + 1] ?? '');
  });
  return raw(out);
}

function renderValue(value: unknown): string {
  if (Array.isArray(value)) return value.map(renderValue).join('');
  if (value && typeof value === 'object' && '__html' in value) return (value as RawHtml).__html;
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(value);
}

/** A CSP source for an inline script or style: `'sha256-…'` content (without the quotes). */
export function cspHash(text: string): string {
  return `sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}`;
}
