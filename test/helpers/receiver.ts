/**
 * A webhook receiver for notification tests: the scripted loopback server of
 * the client tests (test/api/helpers/local-server.ts), answering each request
 * as the test says: a status, or never (`hang`). Stopped, hung connections
 * included, when its test is done.
 */
import { type SeenRequest, startLocalServer } from '../api/helpers/local-server.js';
import { defer } from './cleanup.js';

/** The answer to the `n`th request (0-based): an HTTP status, or `hang` to never answer. */
export type Answer = (n: number, request: SeenRequest) => number | 'hang';

export interface Receiver {
  /** The receiver's URL with `path`. */
  url(path?: string): string;
  /** Every request, in order; `body` is the raw body (what a signature covers), `at` its arrival. */
  readonly received: readonly SeenRequest[];
  /** The requests that came to `path`. */
  to(path: string): SeenRequest[];
}

export async function testReceiver(answer: Answer = () => 200): Promise<Receiver> {
  const server = await startLocalServer((request, res) => {
    const reply = answer(server.requests.length - 1, request);
    if (reply === 'hang') return;
    res.writeHead(reply, { 'content-type': 'text/plain' }).end(reply < 300 ? 'ok' : 'no');
  });
  defer(() => server.stop());
  return {
    url: (path = '/hook') => `${server.origin}${path}`,
    received: server.requests,
    to: (path) => server.requests.filter((r) => r.url === path),
  };
}
