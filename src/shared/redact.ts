/**
 * The one redaction: removes secrets from text before it can reach a log, an
 * error message, the journal, the manifest, the report or stdout. Registered
 * secrets are replaced in every form a careless service or library could
 * write them (verbatim, URL-encoded, base64, the secret part after a
 * `prefix_`); anything that looks like a credential is masked too, registered
 * or not: a bearer token, a key-shaped token (`ifk_live_<hex>`, `sk_test_...`)
 * and the user and password of a URL (`https://user:pw@host`).
 * Service text is redacted where it enters (the client, src/api) and again at
 * each sink as a last line of defence, always through this module. Text for a
 * person's terminal also has its control characters escaped (`printable`).
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

const BEARER = /(bearer\s+)[^\s"',]+/gi;
/** Cheap pre-check: most text (every response of the client) has no bearer word. */
const MAYBE_BEARER = /bearer/i;
/**
 * A live or test API key of any service that marks its keys so (`ifk_live_`,
 * `sk_test_`): the key of another account, or one pasted into a job file,
 * is no less secret for not being the one in the environment. At least 16
 * letters and digits, one a digit, so a file name like `a_test_case` stays.
 */
const KEY_SHAPED = /[a-z]{2,10}_(?:live|test)_(?=[A-Za-z]*\d)[A-Za-z0-9]{16,}/g;
/**
 * The `user:password@` of a URL (any scheme: https, s3, redis, ftp...), also
 * with one slash, as a URL reads once a file path was made of it.
 */
const URL_USERINFO = /([a-z][a-z0-9+.-]*:\/\/?)[^\s/?#@"'`]*@/gi;
/** Cheap pre-check for both patterns above. */
const MAYBE_PATTERN = /_(?:live|test)_|:\/\/?[^\s/?#]*@/i;

export function redact(text: string): string {
  let out = text;
  for (const needle of needles) {
    if (out.includes(needle)) out = out.split(needle).join(REDACTED);
  }
  if (MAYBE_PATTERN.test(out)) {
    // URLs first: a key glued to a URL would take the scheme with it.
    out = out.replace(URL_USERINFO, `$1${REDACTED}@`).replace(KEY_SHAPED, REDACTED);
  }
  return MAYBE_BEARER.test(out) ? out.replace(BEARER, `$1${REDACTED}`) : out;
}

/** How much of a value a message quotes before it is cut. */
const QUOTE_LENGTH = 60;

/**
 * A value the user gave, quoted for a message: redacted first (so a cut
 * cannot leave half a key showing), cut to `max` characters, and written as a
 * JSON string, which escapes control characters (`\u001b`) and line breaks,
 * so one quote stays one line and cannot drive a terminal.
 */
export function quote(value: string, max = QUOTE_LENGTH): string {
  const clean = [...redact(value)];
  return clean.length > max
    ? `${JSON.stringify(clean.slice(0, max - 3).join(''))}...`
    : JSON.stringify(clean.join(''));
}

/**
 * `value` with every string in it redacted (a string, null, undefined, or
 * JSON-like arrays and plain objects; other values are returned as they are).
 * For parsed service responses and for rows and records about to be written.
 */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redact(value) as T;
  if (value === null || typeof value !== 'object') return value;
  // Copy on write: a value with nothing to redact (nearly every response) is
  // returned as it is, without rebuilding it.
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item: unknown, i) => {
      const clean = redactDeep(item);
      if (clean === item) return;
      copy ??= [...value];
      copy[i] = clean;
    });
    return (copy ?? value) as T;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const record = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const [name, field] of Object.entries(record)) {
    const clean = redactDeep(field);
    if (clean === field) continue;
    copy ??= { ...record };
    copy[name] = clean;
  }
  return (copy ?? value) as T;
}

/**
 * Control characters a terminal would obey rather than show: C0 (ESC, BEL,
 * CR, LF, ...), DEL, C1 (a one-byte CSI or OSC), the line and paragraph
 * separators, and the bidirectional overrides and isolates that reorder
 * what a line appears to say.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * `text` redacted, with every control character escaped (`\x1b`, `\n`,
 * `\u202e`): for one line a person reads on a terminal. User input (a CSV
 * value, a file name) can carry escape sequences that would retitle the
 * window, clear the screen or forge a line; shown escaped, they do nothing.
 */
export function printable(text: string): string {
  return redact(text).replace(CONTROL, (ch) => {
    const named = NAMED[ch];
    if (named) return named;
    const code = ch.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** `printable` for each line of a text of several lines (the line breaks kept). */
export function printableLines(text: string): string {
  return text.split('\n').map(printable).join('\n');
}
