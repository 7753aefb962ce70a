/**
 * The base URL must be https unless it points at this machine: the key must
 * never cross a network in clear text. Checked before any connection.
 */
import { isLoopbackHost, UsageError } from '../shared/index.js';

/** True when a URL may carry secrets or payloads: https, or any scheme-http on loopback. */
export function isSafeUrl(url: URL): boolean {
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

/**
 * Parses and checks a base URL (which includes `/api/v1`). Returns it without
 * a trailing slash so endpoint paths can be appended.
 */
export function parseBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new UsageError(
      `Expected the base URL to be an absolute URL like https://host/api/v1, got \`${baseUrl}\``,
    );
  }
  if (url.username || url.password) {
    throw new UsageError('Expected a base URL without credentials in it');
  }
  if (!isSafeUrl(url)) {
    throw new UsageError(
      `Expected an https base URL (plain http is only allowed on loopback), got \`${url.origin}\``,
    );
  }
  url.pathname = url.pathname.replace(/\/+$/, '');
  url.search = '';
  url.hash = '';
  return url;
}
