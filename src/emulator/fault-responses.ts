/** How each injected fault changes what goes over the wire. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type EndpointId, ERROR_CODES } from '../contract/index.js';
import type { Answer } from './call.js';
import type { EmulatorContext } from './context.js';
import type { FaultKind } from './fault-kinds.js';
import { EmulatorHttpError, type ServerErrorStatus } from './http-error.js';
import { sendJson } from './http-util.js';
import { oddStatus } from './status-text.js';

/** Open things a stop must end: stalled and endless responses. */
export interface Pending {
  sockets: Set<import('node:net').Socket>;
  timers: Set<NodeJS.Timeout>;
}

export function resetConnection(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) return;
  const resettable = socket as typeof socket & { resetAndDestroy?: () => void };
  if (typeof resettable.resetAndDestroy === 'function') resettable.resetAndDestroy();
  else socket.destroy();
}

/** Writes an error answer (the pipeline's, which may echo the caller's key). */
export type SendError = (error: EmulatorHttpError, headers?: Record<string, string>) => void;

/** Answers a request with a pre-handling fault; returns false for `slow` (handle after the delay). */
export function applyPreFault(
  ctx: EmulatorContext,
  fault: FaultKind,
  req: IncomingMessage,
  res: ServerResponse,
  pending: Pending,
  accountId: string | undefined,
  sendError: SendError,
): boolean {
  const internal = (status: ServerErrorStatus) =>
    sendError(
      new EmulatorHttpError(
        ERROR_CODES.internal,
        `injected ${status} (emulator fault)`,
        undefined,
        status,
      ),
    );
  switch (fault) {
    case 'reset-before':
      resetConnection(res);
      return true;
    case 'stall':
      if (res.socket) pending.sockets.add(res.socket);
      return true;
    case 'error-500':
      internal(500);
      return true;
    case 'error-502':
      internal(502);
      return true;
    case 'error-503':
      internal(503);
      return true;
    case 'rate-limit-burst':
    case 'rate-limit-no-header': {
      const headers: Record<string, string> = {};
      if (fault === 'rate-limit-burst') {
        const retryAfter = ctx.faults.retryAfter;
        headers['Retry-After'] = retryAfter;
        const until = announcedUntil(retryAfter, ctx.now());
        if (accountId && until !== undefined) ctx.stats.announce(accountId, until);
      }
      sendError(
        new EmulatorHttpError(ERROR_CODES.rateLimited, 'rate limit exceeded (burst)'),
        headers,
      );
      return true;
    }
    case 'redirect':
      res.writeHead(307, {
        Location: `${ctx.uploadOrigin}/redirected${req.url ?? '/'}`,
        'Content-Length': '0',
      });
      res.end();
      return true;
    case 'huge-body': {
      const size = ctx.faults.hugeBodyBytes;
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': size + 14 });
      res.write('{"padding":"');
      res.write(Buffer.alloc(size, 'x'));
      res.end('"}');
      return true;
    }
    case 'endless-body': {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"padding":"');
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const timer = setInterval(() => res.write(chunk), 5);
      pending.timers.add(timer);
      res.on('close', () => {
        clearInterval(timer);
        pending.timers.delete(timer);
      });
      return true;
    }
    default:
      return false;
  }
}

/** A required field of each endpoint's success body, removed by `missing-field`. */
const REQUIRED_FIELD: Record<EndpointId, string> = {
  getAccount: 'credits',
  listInfluencers: 'characters',
  createTraining: 'terminal',
  getTraining: 'terminal',
  listModels: 'models',
  getModel: 'model',
  previewCredits: 'credits',
  createGeneration: 'ids',
  getVideo: 'terminal',
  getImage: 'terminal',
  listGenerations: 'generations',
  presignAsset: 'uploadUrl',
};

/** Sends `answer` damaged by a post-handling fault (or intact when `fault` is undefined). */
export function sendWithPostFault(
  endpoint: EndpointId,
  fault: FaultKind | undefined,
  answer: Answer,
  res: ServerResponse,
  headers: Record<string, string | number>,
): void {
  const success = answer.status < 300 && answer.body !== null && typeof answer.body === 'object';
  switch (success ? fault : undefined) {
    case 'reset-after-commit':
      resetConnection(res);
      return;
    case 'malformed-json': {
      const text = JSON.stringify(answer.body);
      const broken = text.slice(0, Math.max(1, Math.floor(text.length / 2)));
      res.writeHead(answer.status, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(broken),
        ...headers,
      });
      res.end(broken);
      return;
    }
    case 'missing-field': {
      const body = { ...(answer.body as Record<string, unknown>) };
      delete body[REQUIRED_FIELD[endpoint]];
      sendJson(res, answer.status, body, headers);
      return;
    }
    case 'unknown-status': {
      sendJson(res, answer.status, oddStatuses(answer.body), headers);
      return;
    }
    default:
      sendJson(res, answer.status, answer.body, headers);
  }
}

function oddStatuses(body: unknown): unknown {
  if (Array.isArray(body)) return body.map(oddStatuses);
  if (body === null || typeof body !== 'object') return body;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    out[k] = k === 'status' && typeof v === 'string' ? oddStatus(v.toLowerCase()) : oddStatuses(v);
  }
  return out;
}

/** When an injected Retry-After (seconds or an HTTP-date) elapses, for early-request detection. */
function announcedUntil(retryAfter: string, now: number): number | undefined {
  const at = /^\d+$/.test(retryAfter) ? now + Number(retryAfter) * 1000 : Date.parse(retryAfter);
  return Number.isFinite(at) ? at : undefined;
}
