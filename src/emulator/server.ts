/**
 * The /api/v1 request pipeline: route, pick faults, authenticate, settle
 * due refunds, resolve idempotency, rate-limit, handle, answer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { API_PREFIX, type Bucket, ENDPOINTS, ERROR_CODES } from '../contract/index.js';
import { canonicalJson } from '../shared/index.js';
import type { Answer, ApiCall } from './call.js';
import type { EmulatorContext } from './context.js';
import { echoKeyIn } from './echo-key.js';
import {
  applyPreFault,
  type Pending,
  type SendError,
  sendWithPostFault,
} from './fault-responses.js';
import { handle } from './handlers.js';
import { EmulatorHttpError, notFound } from './http-error.js';
import { sendJson } from './http-util.js';
import { type IdempotencyLookup, idempotencyKeyOf } from './idempotency.js';
import { parseJson, readBody } from './parse-body.js';
import { matchRoute } from './routes.js';

const delay = (ms: number, pending: Pending) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      pending.timers.delete(timer);
      resolve();
    }, ms);
    pending.timers.add(timer);
  });

function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

function errorAnswer(error: unknown): Answer {
  if (error instanceof EmulatorHttpError) return error.answer();
  return new EmulatorHttpError(ERROR_CODES.internal, 'internal error').answer();
}

export async function handleApi(
  ctx: EmulatorContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  pending: Pending,
): Promise<void> {
  const path = url.pathname.slice(API_PREFIX.length) || '/';
  const route = matchRoute(req.method ?? 'GET', path);
  const key = bearer(req.headers.authorization);
  const account = key ? ctx.store.accountForKey(key) : undefined;
  // The `echoKeyInErrors` behaviour quotes the caller's key in every answer's error texts.
  const echoed = (answer: Answer): Answer =>
    ctx.behaviour.echoKeyInErrors && key ? echoKeyIn(answer, key) : answer;
  const sendError: SendError = (error, headers = {}) => {
    const answer = echoed(error.answer());
    sendJson(res, answer.status, answer.body, headers);
  };
  const plan = route ? ctx.faults.plan(route.endpoint, account?.id) : {};
  for (const fault of [plan.pre, plan.post, plan.outcome]) {
    if (fault && route) {
      ctx.stats.faults.push({
        seq: ctx.stats.faults.length + 1,
        fault,
        endpoint: route.endpoint,
        ...(account ? { accountId: account.id } : {}),
        at: new Date(ctx.now()).toISOString(),
      });
    }
  }
  if (plan.pre) {
    if (applyPreFault(ctx, plan.pre, req, res, pending, account?.id, sendError)) {
      req.resume();
      return;
    }
    await delay(ctx.faults.slowMs, pending); // `slow`
  }
  const raw = req.method === 'POST' ? await readBody(req).catch((e: unknown) => e) : undefined;
  if (!account) {
    ctx.stats.unauthorized++;
    sendError(
      new EmulatorHttpError(
        ERROR_CODES.unauthorized,
        'Authorization: missing, invalid or revoked API key',
      ),
    );
    return;
  }
  const now = ctx.now();
  ctx.store.settle(now);
  ctx.stats.observe(account.id, route?.endpoint ?? path, now);

  // Parse problems are answered after the rate check, like any other 400.
  let body: unknown;
  let early: EmulatorHttpError | undefined;
  let idempotencyKey: string | undefined;
  let lookup: IdempotencyLookup = { kind: 'new' };
  try {
    if (raw instanceof Error) throw raw;
    if (raw !== undefined) body = parseJson(raw as Buffer);
    if (route && ENDPOINTS[route.endpoint].creates) {
      idempotencyKey = idempotencyKeyOf(
        req.headers['idempotency-key'],
        route.endpoint === 'createTraining',
      );
      if (idempotencyKey !== undefined) {
        const fingerprint = canonicalJson({ endpoint: route.endpoint, ...route.params, body });
        lookup = ctx.idempotency.lookup(account.id, idempotencyKey, fingerprint);
      }
    }
  } catch (error) {
    early = error instanceof EmulatorHttpError ? error : undefined;
  }

  // A replay or a conflict creates nothing: it counts in `requests` only.
  const buckets: readonly Bucket[] =
    route && lookup.kind === 'new' && !early ? ENDPOINTS[route.endpoint].buckets : ['requests'];
  const decision = ctx.limiter.take(account.id, buckets, now);
  if (!decision.allowed) {
    const seconds = Math.max(1, Math.ceil(decision.waitMs / 1000));
    ctx.stats.announce(account.id, now + seconds * 1000);
    ctx.stats.count(account.id, 'rateLimited');
    sendError(
      new EmulatorHttpError(
        ERROR_CODES.rateLimited,
        `rate limit of the ${decision.blockedBy} bucket exceeded; retry after ${seconds}s`,
        { bucket: decision.blockedBy },
      ),
      { 'Retry-After': String(seconds), 'Retry-After-Ms': String(Math.ceil(decision.waitMs)) },
    );
    return;
  }
  const limit = ctx.limiter.headers(account.id, now);
  const headers: Record<string, string | number> = {
    'X-RateLimit-Limit': limit.limit,
    'X-RateLimit-Remaining': limit.remaining,
  };

  let answer: Answer;
  if (early) answer = errorAnswer(early);
  else if (!route) answer = errorAnswer(notFound(`${req.method} ${path}`));
  else if (lookup.kind === 'replay') {
    ctx.stats.count(account.id, 'replays');
    answer = { status: ctx.behaviour.replayStatus, body: lookup.body };
    headers['Idempotent-Replayed'] = 'true';
  } else if (lookup.kind === 'conflict') {
    ctx.stats.count(account.id, 'conflicts');
    answer = new EmulatorHttpError(
      ERROR_CODES.idempotencyConflict,
      'Idempotency-Key: already used with a different payload',
    ).answer();
  } else {
    const call: ApiCall = {
      endpoint: route.endpoint,
      account,
      params: route.params,
      query: url.searchParams,
      headers: req.headers,
      body,
      ...(plan.outcome ? { outcomeFault: plan.outcome } : {}),
    };
    if (route.endpoint === 'previewCredits') ctx.stats.count(account.id, 'previews');
    try {
      answer = handle(ctx, call, idempotencyKey);
      if (ENDPOINTS[route.endpoint].creates && answer.status === 202) {
        ctx.stats.count(account.id, route.endpoint === 'createTraining' ? 'trainings' : 'creates');
        if (idempotencyKey !== undefined) {
          const fingerprint = canonicalJson({ endpoint: route.endpoint, ...route.params, body });
          ctx.idempotency.remember(account.id, idempotencyKey, { fingerprint, body: answer.body });
        }
      }
    } catch (error) {
      answer = errorAnswer(error);
    }
  }
  sendWithPostFault(
    route?.endpoint ?? 'getAccount',
    route ? plan.post : undefined,
    echoed(answer),
    res,
    headers,
  );
}
