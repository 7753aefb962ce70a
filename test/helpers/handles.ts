/** What keeps this process alive, counted and described (for the leak check of setup-leaks.ts). */
import type { ChildProcess } from 'node:child_process';
import type { Server, Socket } from 'node:net';

/**
 * Open resources by type (TCPServerWrap, TCPSocketWrap, Timeout, ProcessWrap, ...).
 * Timers are left out (see timers.ts).
 */
export function resourceCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) {
    // Filesystem requests in flight come and go with vitest's own module loading;
    // timers are counted unreliably here and are tracked by timers.ts instead.
    if (type === 'FSReqCallback' || type === 'FSReqPromise' || type === 'Timeout') continue;
    counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return counts;
}

/** The handle objects behind the counts (servers, sockets, child processes, timers). */
export function openHandles(): unknown[] {
  // Undocumented but stable since Node 0.x; the documented API names types only.
  const getter = (process as unknown as { _getActiveHandles?: () => unknown[] })._getActiveHandles;
  return getter ? getter.call(process) : [];
}

/** One line naming a handle: its class and, for servers and sockets, the address. */
export function describeHandle(handle: unknown): string {
  const name = (handle as object | null)?.constructor?.name ?? typeof handle;
  if (name === 'Server') {
    const address = (handle as Server).address();
    return `Server listening on ${typeof address === 'string' ? address : `${address?.address}:${address?.port}`}`;
  }
  if (name === 'Socket') {
    const socket = handle as Socket;
    if (socket.remotePort === undefined) return 'Socket (not connected, or a pipe)';
    return `Socket ${socket.localAddress}:${socket.localPort} -> ${socket.remoteAddress}:${socket.remotePort}`;
  }
  if (name === 'ChildProcess') {
    const child = handle as ChildProcess;
    return `ChildProcess pid ${child.pid} (${child.spawnfile} ${child.spawnargs.slice(1).join(' ')})`;
  }
  return name;
}
