/**
 * A loopback TCP port nothing listens on right now: for a server a test is
 * about to start (redis-server), or for a store or service that must be
 * unreachable (connections are refused).
 */
import { once } from 'node:events';
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}
