/**
 * The admin surface (`/__admin/*`, loopback only, JSON, outside rate limits
 * and faults): ledger, stats, credits, key revocation, behaviours, faults.
 * Due refunds are settled before every admin read.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { API_KEY_PREFIX, type Bucket, ERROR_CODES } from '../contract/index.js';
import type { EmulatorContext } from './context.js';
import { isFaultKind } from './fault-kinds.js';
import { EmulatorHttpError, validationError } from './http-error.js';
import { isLoopback, sendJson } from './http-util.js';
import {
  type Behaviour,
  DEFAULT_BEHAVIOUR,
  type FaultConfig,
  type FaultScript,
} from './options.js';
import { parseJson, readBody } from './parse-body.js';
import type { BucketSnapshot } from './rate-limit.js';
import type { LedgerEntry } from './state.js';
import {
  type AccountCounters,
  type EarlyRequest,
  emptyCounters,
  type InjectedFault,
  type UploadAuthorizationRecord,
} from './stats.js';

export interface AccountStats {
  id: string;
  credits: number;
  buckets: Record<Bucket, BucketSnapshot>;
  counters: AccountCounters;
  /** Authenticated requests that arrived, by endpoint id (429s included). */
  requestsByEndpoint: Record<string, number>;
  earlyRequests: EarlyRequest[];
}

export interface EmulatorStats {
  accounts: AccountStats[];
  earlyRequests: EarlyRequest[];
  uploadAuthorization: UploadAuthorizationRecord[];
  faults: InjectedFault[];
  pendingFaultScripts: FaultScript[];
  unauthorized: number;
  behaviour: Behaviour;
}

function stats(ctx: EmulatorContext): EmulatorStats {
  const now = ctx.now();
  return {
    accounts: [...ctx.store.accounts.values()].map((a) => ({
      id: a.id,
      credits: a.credits,
      buckets: ctx.limiter.snapshot(a.id, now),
      counters: ctx.stats.counters.get(a.id) ?? emptyCounters(),
      requestsByEndpoint: { ...(ctx.stats.byEndpoint.get(a.id) ?? {}) },
      earlyRequests: ctx.stats.earlyRequests.filter((e) => e.accountId === a.id),
    })),
    earlyRequests: ctx.stats.earlyRequests,
    uploadAuthorization: ctx.stats.uploadAuthorization,
    faults: ctx.stats.faults,
    pendingFaultScripts: ctx.faults.pendingScripts(),
    unauthorized: ctx.stats.unauthorized,
    behaviour: ctx.behaviour,
  };
}

function ledger(ctx: EmulatorContext, accountId: string | null): LedgerEntry[] {
  return accountId ? ctx.store.ledger.filter((e) => e.accountId === accountId) : ctx.store.ledger;
}

type Route = (ctx: EmulatorContext, body: Record<string, unknown>, url: URL) => unknown;

const fail = (message: string): never => {
  throw validationError(message);
};

const ROUTES: Record<string, Route> = {
  'GET /ledger': (ctx, _b, url) => ({ entries: ledger(ctx, url.searchParams.get('accountId')) }),
  'GET /stats': (ctx) => stats(ctx),
  'GET /accounts': (ctx) => ({
    accounts: [...ctx.store.accounts.values()].map((a) => ({
      id: a.id,
      apiKey: a.apiKeys[0],
      credits: a.credits,
    })),
  }),
  'POST /credits': (ctx, body) => {
    const account = ctx.store.accounts.get(String(body.accountId));
    if (!account || typeof body.credits !== 'number')
      fail('Expected { accountId, credits: number }');
    account!.credits = body.credits as number;
    return { id: account!.id, credits: account!.credits };
  },
  'POST /revoke': (ctx, body) => ({ revoked: ctx.store.revokeKey(String(body.apiKey)) }),
  'POST /keys': (ctx, body) => {
    const apiKey = ctx.store.issueKey(
      String(body.accountId),
      `${API_KEY_PREFIX}${ctx.random.ids.hex(32)}`,
    );
    if (!apiKey) fail('Expected { accountId } of an existing account');
    return { apiKey };
  },
  'POST /behaviour': (ctx, body) => {
    for (const key of Object.keys(body))
      if (!(key in DEFAULT_BEHAVIOUR)) fail(`Unknown behaviour ${key}`);
    ctx.behaviour = { ...ctx.behaviour, ...(body as Partial<Behaviour>) };
    return ctx.behaviour;
  },
  'POST /faults': (ctx, body) => {
    for (const key of Object.keys((body.rates as object | undefined) ?? {})) {
      if (!isFaultKind(key)) fail(`Unknown fault ${key}`);
    }
    ctx.faults.setConfig(body as FaultConfig);
    return { ok: true };
  },
  'POST /faults/script': (ctx, body) => {
    const scripts = body.scripts as FaultScript[] | undefined;
    if (!Array.isArray(scripts)) fail('Expected { scripts: [...] }');
    for (const s of scripts ?? []) if (!isFaultKind(s.fault)) fail(`Unknown fault ${s.fault}`);
    ctx.faults.addScripts(scripts ?? []);
    return { pending: ctx.faults.pendingScripts() };
  },
  // "Service state lost": these generations vanish (a service restarted
  // without them): their ids answer 404 from now on; the ledger keeps their
  // charges and a refund already due still comes.
  'POST /forget-generations': (ctx, body) => {
    const account = ctx.store.accounts.get(String(body.accountId));
    const ids = body.ids;
    if (!account || !Array.isArray(ids)) fail('Expected { accountId, ids: [...] }');
    const gone = new Set(
      (ids as unknown[]).filter((id) => account!.generations.delete(String(id))),
    );
    account!.generationOrder = account!.generationOrder.filter((g) => !gone.has(g.id));
    return { forgotten: [...gone].map(String) };
  },
  'POST /reset': (ctx) => {
    ctx.limiter.reset();
    ctx.stats.reset();
    ctx.faults.clear();
    ctx.behaviour = { ...ctx.options.behaviour };
    return { ok: true };
  },
};

export async function handleAdmin(
  ctx: EmulatorContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  if (!isLoopback(req.socket.remoteAddress)) {
    req.resume();
    new EmulatorHttpError('forbidden', 'admin is loopback only').send(res);
    return;
  }
  const route = ROUTES[`${req.method} ${url.pathname.slice('/__admin'.length)}`];
  if (!route) {
    req.resume();
    new EmulatorHttpError(ERROR_CODES.notFound, 'no such admin route').send(res);
    return;
  }
  try {
    const raw = req.method === 'POST' ? await readBody(req) : undefined;
    const body = raw && raw.length > 0 ? (parseJson(raw) as Record<string, unknown>) : {};
    ctx.store.settle(ctx.now());
    sendJson(res, 200, route(ctx, body, url));
  } catch (error) {
    const refused =
      error instanceof EmulatorHttpError
        ? error
        : validationError(error instanceof Error ? error.message : String(error));
    refused.send(res);
  }
}
