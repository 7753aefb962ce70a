/**
 * The one redaction: removes secrets from text before it can reach a log, an
 * error message, the journal, the manifest, the report or stdout. Registered
 * secrets are replaced in every form a careless service or library could
 * write them (verbatim, URL-encoded, base64, the secret part after a
 * `prefix_`); anything that looks like a bearer credential is masked too.
 * Service text is redacted where it enters (the client, src/api) and again at
 * each sink as a last line of defence, always through this module.
 */
export const REDACTED = '[REDACTED]';

/** Forms to remove, longest first so a whole key is not left half-replaced. */
let needles: string[] = [];

/** A secret part shorter than this is not redacted alone (too likely to be ordinary text). */
const MIN_PART_LENGTH = 16;

/** The forms of `secret` that are removed wherever they occur. */
function formsOf(secret: string): string[] {
  const forms = [
    secret,
    encodeURIComponent(secret),
    Buffer.from(secret).toString('base64'),
    Buffer.from(secret).toString('base64url'),
  ];
  // `ifk_live_<hex>`: the hex alone is the credential.
  const part = secret.slice(Math.max(secret.lastIndexOf('_'), secret.lastIndexOf('-')) + 1);
  if (part.length >= MIN_PART_LENGTH) forms.push(part);
  return forms;
}

/** Registers a secret (the API key) so every later `redact` call removes it. */
export function registerSecret(secret: string | undefined): void {
  if (!secret || secret.length < 6) return;
  const all = new Set([...needles, ...formsOf(secret)]);
  needles = [...all].sort((a, b) => b.length - a.length);
}

export function redact(text: string): string {
  let out = text;
  for (const needle of needles) {
    if (out.includes(needle)) out = out.split(needle).join(REDACTED);
  }
  return out.replace(/(bearer\s+)[^\s"',]+/gi, `$1${REDACTED}`);
}

/**
 * `value` with every string in it redacted (a string, null, undefined, or
 * JSON-like arrays and plain objects; other values are returned as they are).
 * For parsed service responses and for rows and records about to be written.
 */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => redactDeep(v)) as T;
  if (value === null || typeof value !== 'object') return value;
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) out[name] = redactDeep(field);
  return out as T;
}
