/**
 * The review server's guards. The page can change what the next
 * run spends, so: a random token per session on every request (any other
 * local process or web page cannot guess it), compared in constant time;
 * decisions only by POST with the token in a header and a JSON body (a form
 * on another site can set neither, so no CSRF); no cross-origin `Origin`;
 * loopback only unless the user insists; and no request naming another
 * `Host` than the address it listens on (a DNS-rebinding page reaches the
 * port under its own name, which the browser then treats as same-origin).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { UsageError } from '../../shared/index.js';

export const TOKEN_HEADER = 'x-ibatch-token';

export const newToken = (): string => randomBytes(24).toString('base64url');

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** The host to listen on: loopback, or another only with `unsafeHost`. */
export function checkHost(host: string, unsafeHost: boolean): string {
  if (LOOPBACK.has(host) || unsafeHost) return host;
  throw new UsageError(
    `--host ${host} would serve the review page beyond this machine: use 127.0.0.1, or add --unsafe-host`,
  );
}

/** Which `Host` headers name this listener. */
export interface ListenerHosts {
  accepts(host: string | undefined): boolean;
  /** What a refusal names as the accepted form. */
  readonly shown: string;
}

/**
 * The `Host` values that name this listener: the address it listens on with
 * its port, and `localhost:PORT` beside a loopback address, since a browser
 * resolves that name itself and no web page can rebind it. `::1` is another
 * listener than `127.0.0.1` (and the other way round): refused. On a wildcard
 * address (`0.0.0.0`, `::`, only with --unsafe-host) any IP literal with the
 * port: a literal address names no DNS record a page could rebind.
 */
export function listenerHosts(host: string, port: number): ListenerHosts {
  const lower = host.toLowerCase();
  const literal = lower.includes(':') ? `[${lower}]` : lower;
  const names = new Set([`${literal}:${port}`]);
  if (LOOPBACK.has(lower)) names.add(`localhost:${port}`);
  const wildcard = WILDCARD.has(lower);
  return {
    shown: wildcard ? `IP:${port}` : [...names].join(' or '),
    accepts(given) {
      const value = given?.toLowerCase();
      if (value === undefined) return false;
      if (names.has(value)) return true;
      if (!wildcard || !value.endsWith(`:${port}`)) return false;
      const address = value.slice(0, -`:${port}`.length).replace(/^\[(.*)\]$/, '$1');
      return isIP(address) !== 0;
    },
  };
}

const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

/** Why a request is refused for its `Host` header (undefined: it names this listener). */
export function hostRefusal(req: IncomingMessage, hosts: ListenerHosts): string | undefined {
  if (hosts.accepts(req.headers.host)) return undefined;
  return `this server answers only as ${hosts.shown} (Host header)`;
}

/** Whether `given` is the session's token, in time independent of where they differ. */
export function tokenMatches(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  // Compare equal lengths only (timingSafeEqual throws otherwise); the length
  // of a random token is no secret.
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token a request carries: the header first, else `?token=`. */
export function requestToken(req: IncomingMessage, url: URL): string | undefined {
  const header = req.headers[TOKEN_HEADER];
  if (typeof header === 'string') return header;
  return url.searchParams.get('token') ?? undefined;
}

/**
 * Why a state-changing request is refused (undefined: accepted). The token
 * must come in the header, the body must be JSON, and a browser's `Origin`
 * (sent on every cross-site POST) must be this server's own.
 */
export function postRefusal(req: IncomingMessage, token: string): string | undefined {
  const header = req.headers[TOKEN_HEADER];
  if (!tokenMatches(token, typeof header === 'string' ? header : undefined)) {
    return 'decisions need the token in the X-Ibatch-Token header';
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') return 'decisions need Content-Type: application/json';
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `http://${req.headers.host ?? ''}`) {
    return `cross-origin request from ${origin}`;
  }
  return undefined;
}

/** Headers on every response: the page may load only from this server, nothing sniffed or referred. */
export function setSafetyHeaders(res: ServerResponse, scriptHash?: string, styleHash?: string) {
  const csp = [
    "default-src 'self'",
    "img-src 'self'",
    "media-src 'self'",
    `script-src ${scriptHash ? `'${scriptHash}'` : "'none'"}`,
    `style-src ${styleHash ? `'${styleHash}'` : "'none'"}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  res.setHeader('Content-Security-Policy', csp);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Frame-Options', 'DENY');
}
