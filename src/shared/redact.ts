/**
 * Removes secrets from text before it can reach a log, an error message, the
 * journal or a report. Registered secrets are replaced verbatim; anything that
 * looks like a bearer credential is masked too.
 */
const secrets = new Set<string>();

export const REDACTED = '[REDACTED]';

/** Registers a secret (the API key) so every later `redact` call removes it. */
export function registerSecret(secret: string | undefined): void {
  if (secret && secret.length >= 6) secrets.add(secret);
}

export function redact(text: string): string {
  let out = text;
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out.replace(/(bearer\s+)[^\s"',]+/gi, `$1${REDACTED}`);
}
