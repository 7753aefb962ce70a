/**
 * The one definition of a service's identity: which base URLs name the same
 * service. The journal keys budget, resume, "done", assets and trainings by
 * it, so two spellings of one service must give one string, or a re-run
 * under the other spelling starts over with new idempotency keys and pays
 * every item again.
 *
 * What is the same service: scheme and host case (the URL parser lowers
 * them), the scheme's default port, a trailing dot in the host (the same
 * fully qualified name), trailing slashes in the path, and every loopback
 * name (`localhost`, `*.localhost`, 127.0.0.0/8, ::1) on one port: one
 * machine, one listener. The path's case, query and anything else stay
 * significant. Two different host names are never judged the same here (a
 * URL cannot tell that they reach one service): the user says so
 * (`run --service-moved`).
 */
import { isIP } from 'node:net';

/** The host every loopback spelling is named by in a service identity. */
const LOOPBACK = 'localhost';

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1';
  return false;
}

/**
 * The canonical spelling of a service base URL (e.g. `http://localhost:8080/api/v1`).
 * Never throws: a string that is not a URL (a journal row older than the
 * checks) is its own identity.
 */
export function canonicalServiceUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return baseUrl;
  }
  const host = url.hostname.replace(/\.+$/, '');
  url.hostname = isLoopbackHost(host) ? LOOPBACK : host;
  const path = url.pathname.replace(/\/+$/, '');
  // Credentials, query and fragment never reach a request (parseBaseUrl): not part of the identity.
  return `${url.protocol}//${url.host}${path}`;
}

/**
 * A scope (`<service>#<account fingerprint>`: where assets and trainings are
 * reused) with its service part canonical.
 */
export function canonicalScope(scope: string): string {
  const hash = scope.lastIndexOf('#');
  if (hash < 0) return scope;
  return `${canonicalServiceUrl(scope.slice(0, hash))}${scope.slice(hash)}`;
}
