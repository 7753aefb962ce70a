/**
 * The `echoKeyInErrors` behaviour: a careless service that quotes the caller's
 * API key back in every text it writes: an error body's `message` and
 * `details`, a generation's or a training's `error`. It echoes the forms a
 * leak could take (verbatim, URL-encoded, the secret part alone, base64) so
 * tests can prove the client keeps every one of them off disk and out of
 * its output.
 */
import type { Answer } from './call.js';

/** The text appended to every error text while the behaviour is on. */
function keyEcho(apiKey: string): string {
  const secretPart = apiKey.slice(apiKey.lastIndexOf('_') + 1);
  const base64 = Buffer.from(apiKey).toString('base64');
  return ` (you called with Bearer ${apiKey}; url ?key=${encodeURIComponent(apiKey)}; secret ${secretPart}; b64 ${base64})`;
}

/** `answer` with the key echoed into its error texts (a copy; stored records are untouched). */
export function echoKeyIn(answer: Answer, apiKey: string): Answer {
  return { status: answer.status, body: echoInto(answer.body, keyEcho(apiKey), false) };
}

function echoInto(value: unknown, echo: string, inErrorBody: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => echoInto(v, echo, false));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    if (name === 'error' && typeof field === 'string') out[name] = `${field}${echo}`;
    else if (name === 'error' && field !== null && typeof field === 'object') {
      out[name] = echoInto(field, echo, true);
    } else if (inErrorBody && name === 'message' && typeof field === 'string') {
      out[name] = `${field}${echo}`;
    } else out[name] = echoInto(field, echo, false);
  }
  if (inErrorBody) out.details = { echoed: echo.trim(), original: out.details ?? null };
  return out;
}
