/**
 * The limits-store URL as it may be shown, logged or sent: `redis://` or
 * `rediss://`, host, port (as given) and database, without the user name and
 * password (`redis://:PASSWORD@HOST`) nor a query string (ioredis reads
 * options such as a password from it too). Only the process that connects
 * ever holds them.
 */
export function storeUrlWithoutCredentials(store: string): string {
  try {
    const url = new URL(store);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    // Not a URL (a message says so): drop whatever precedes an `@` of the authority.
    return store.replace(/\/\/[^/?#]*@/, '//').replace(/[?#].*$/, '');
  }
}

/** `HOST:PORT` of the store (6379 when the URL names none): what messages about it say. */
export function storeHostPort(url: URL): string {
  return `${url.hostname}:${url.port || '6379'}`;
}
