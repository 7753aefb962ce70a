/**
 * Delivers a run's end to its receivers: one POST per URL, all in parallel,
 * each retried with backoff (the client's retry policy, src/api) after a
 * network fault, a timeout, a 429 or a 5xx, all of it within one total bound
 * so a receiver that hangs never holds the run's exit for long. A receiver
 * that still fails costs one warning line; the caller's exit code never
 * depends on it.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { Agent } from 'undici';
import {
  DEFAULT_RETRY_OPTIONS,
  type Failure,
  parseRetryAfter,
  RetryCounter,
  type RetryOptions,
} from '../api/index.js';
import { type NotifyTarget, receiverName } from '../job/index.js';
import { type Logger, linkSignals, sleep, undici } from '../shared/index.js';
import { USER_AGENT } from '../version.js';
import type { RunEndEvent } from './event.js';
import { slackMessage } from './slack.js';

/** Everything together, every receiver and retry, ends within this (docs/notify.md). */
export const NOTIFY_TOTAL_MS = 5_000;
/** One attempt: connect, send and get the answer's headers. */
export const NOTIFY_ATTEMPT_MS = 2_000;

/** Short steps: the whole budget is a few seconds. */
const NOTIFY_RETRY: RetryOptions = {
  ...DEFAULT_RETRY_OPTIONS,
  baseDelayMs: 250,
  maxDelayMs: 1_000,
  maxRetries: 3,
  maxRateLimitRetries: 2,
};

export interface SendOptions {
  /** `IBATCH_NOTIFY_SECRET`: signs each body (`X-Ibatch-Signature`). */
  readonly secret?: string | undefined;
  readonly logger: Logger;
  /** @default {@link NOTIFY_TOTAL_MS} */
  readonly totalMs?: number;
  /** @default {@link NOTIFY_ATTEMPT_MS} */
  readonly attemptMs?: number;
}

export interface Delivery {
  readonly url: string;
  readonly delivered: boolean;
  readonly attempts: number;
  /** `X-Ibatch-Delivery`: the same on every attempt, for the receiver to drop repeats. */
  readonly deliveryId: string;
}

export const SIGNATURE_HEADER = 'x-ibatch-signature';

/** `sha256=<hex>`: the HMAC-SHA256 of the exact body bytes, like GitHub's `X-Hub-Signature-256`. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export async function sendNotifications(
  targets: readonly NotifyTarget[],
  event: RunEndEvent,
  options: SendOptions,
): Promise<Delivery[]> {
  if (targets.length === 0) return [];
  const totalMs = options.totalMs ?? NOTIFY_TOTAL_MS;
  const attemptMs = Math.min(options.attemptMs ?? NOTIFY_ATTEMPT_MS, totalMs);
  const deadline = AbortSignal.timeout(totalMs);
  // Our own pool, destroyed at the end: no socket (a hung one least of all)
  // outlives the bound or keeps the process alive.
  const agent = new (undici().Agent)({ connect: { timeout: attemptMs } });
  const post = { agent, deadline, deadlineAt: Date.now() + totalMs, attemptMs, options };
  try {
    return await Promise.all(targets.map((target) => deliver(target, event, post)));
  } finally {
    await agent.destroy().catch(() => undefined);
  }
}

interface Post {
  readonly agent: Agent;
  readonly deadline: AbortSignal;
  readonly deadlineAt: number;
  readonly attemptMs: number;
  readonly options: SendOptions;
}

async function deliver(target: NotifyTarget, event: RunEndEvent, post: Post): Promise<Delivery> {
  const body = JSON.stringify(target.format === 'slack' ? slackMessage(event) : event);
  const deliveryId = randomUUID();
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-ibatch-event': event.event,
    'x-ibatch-delivery': deliveryId,
    ...(post.options.secret ? { [SIGNATURE_HEADER]: signature(post.options.secret, body) } : {}),
  };
  const retries = new RetryCounter(true, NOTIFY_RETRY);
  let attempts = 0;
  let why = '';
  for (;;) {
    attempts++;
    const failure = await attempt(target.url, body, headers, post);
    if (failure === undefined) return { url: target.url, delivered: true, attempts, deliveryId };
    why = describe(failure, post.attemptMs);
    const decision = post.deadline.aborted ? { retry: false as const } : retries.next(failure);
    if (!decision.retry || Date.now() + decision.delayMs >= post.deadlineAt) break;
    try {
      await sleep(decision.delayMs, post.deadline);
    } catch {
      break;
    }
  }
  if (post.deadline.aborted)
    why = `no answer within ${Math.round((post.options.totalMs ?? NOTIFY_TOTAL_MS) / 1000)} s`;
  const receiver = receiverName(target.url);
  post.options.logger.warn(
    { receiver, deliveryId, attempts },
    `notification to ${receiver} not delivered after ${attempts} attempt(s): ${why}; the exit code is unchanged`,
  );
  return { url: target.url, delivered: false, attempts, deliveryId };
}

/** One POST; undefined when the receiver took it (2xx), else what went wrong. */
async function attempt(
  url: string,
  body: string,
  headers: Record<string, string>,
  post: Post,
): Promise<Failure | undefined> {
  const { origin, pathname, search } = new URL(url);
  const timeout = AbortSignal.timeout(post.attemptMs);
  const link = linkSignals([post.deadline, timeout]);
  try {
    const response = await post.agent.request({
      origin,
      path: `${pathname}${search}`,
      method: 'POST',
      headers,
      body,
      headersTimeout: post.attemptMs,
      bodyTimeout: post.attemptMs,
      signal: link.signal,
    });
    // The answer's body says nothing we use; reading it frees the socket.
    await response.body.dump().catch(() => undefined);
    const status = response.statusCode;
    if (status >= 200 && status < 300) return undefined;
    const retryAfterMs = parseRetryAfter(headerOf(response.headers['retry-after']), Date.now());
    return { type: 'status', status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    const timedOut =
      timeout.aborted ||
      code === 'UND_ERR_HEADERS_TIMEOUT' ||
      code === 'UND_ERR_BODY_TIMEOUT' ||
      code === 'UND_ERR_CONNECT_TIMEOUT';
    return timedOut ? { type: 'timeout' } : { type: 'network' };
  } finally {
    link.release();
  }
}

function headerOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function describe(failure: Failure, attemptMs: number): string {
  switch (failure.type) {
    case 'status':
      return `HTTP ${failure.status}`;
    case 'timeout':
      return `no answer within ${attemptMs} ms`;
    case 'network':
      return 'could not connect';
    default: {
      const never: never = failure;
      return String(never);
    }
  }
}
