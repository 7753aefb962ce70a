/**
 * The hand-written client users have today, kept in the repo as the
 * benchmark's baseline: a fixed pool of workers (4), each taking the next
 * prompt, creating it with an idempotency key, then polling that one
 * generation by id every 2 s until it is terminal. It retries a 429 after the
 * wait the service announced, a 5xx or a dropped connection after one poll
 * interval, and keeps no journal.
 *
 * On the time-scaled emulator a `Retry-After` in whole seconds would
 * overstate the wait by up to a second of real time (a third of a scaled
 * window), so the naive client reads the emulator's exact `Retry-After-Ms`
 * when present: the scaled equivalent of honouring `Retry-After` on the real
 * service, and the generous reading for the baseline.
 */
import { randomUUID } from 'node:crypto';

export interface NaiveClientOptions {
  /** Service base URL including `/api/v1`. */
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly modelId: string;
  readonly kind: 'image' | 'video';
  /** One generation per prompt (copies 1). */
  readonly prompts: readonly string[];
  /** @default 4 */
  readonly concurrency?: number;
  /** Poll interval per generation. @default 2000 (divide by the time scale) */
  readonly pollMs?: number;
  /** Gives up on an item after this many failed tries of one request. @default 20 */
  readonly maxTries?: number;
}

export interface NaiveResult {
  /** Generations seen terminal, by outcome. */
  readonly succeeded: number;
  readonly failed: number;
  /** 429 answers received. */
  readonly rateLimited: number;
  /** Requests sent (client-side count; the benchmark uses the emulator's). */
  readonly requests: number;
  /** Epoch ms at which each generation was seen terminal. */
  readonly doneAt: readonly number[];
}

class NaiveHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runNaiveClient(options: NaiveClientOptions): Promise<NaiveResult> {
  const pollMs = options.pollMs ?? 2000;
  const maxTries = options.maxTries ?? 20;
  const base = options.baseUrl.replace(/\/$/, '');
  const headers = { authorization: `Bearer ${options.apiKey}`, accept: 'application/json' };
  const stats = { succeeded: 0, failed: 0, rateLimited: 0, requests: 0 };
  const doneAt: number[] = [];
  const runTag = randomUUID().slice(0, 8);

  /** One request, retried on 429 (after the announced wait), 5xx and network errors. */
  async function send(path: string, init: RequestInit = {}): Promise<Record<string, unknown>> {
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        stats.requests++;
        response = await fetch(`${base}${path}`, {
          ...init,
          headers: { ...headers, ...(init.headers as Record<string, string> | undefined) },
        });
      } catch (error) {
        if (attempt >= maxTries) throw error;
        await sleep(pollMs);
        continue;
      }
      const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
      if (response.ok) return body;
      if (response.status === 429) {
        stats.rateLimited++;
        const exact = Number(response.headers.get('retry-after-ms'));
        const seconds = Number(response.headers.get('retry-after'));
        const waitMs = Number.isFinite(exact) && exact > 0 ? exact : (seconds || 1) * 1000;
        if (attempt >= maxTries) throw new NaiveHttpError(429, `still rate limited on ${path}`);
        await sleep(waitMs);
        continue;
      }
      if (response.status >= 500 && attempt < maxTries) {
        await sleep(pollMs);
        continue;
      }
      throw new NaiveHttpError(
        response.status,
        `${init.method ?? 'GET'} ${path}: HTTP ${response.status}`,
      );
    }
  }

  async function runItem(index: number, prompt: string): Promise<void> {
    const created = await send(`/models/${encodeURIComponent(options.modelId)}/generations`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': `naive-${runTag}-${index}`,
      },
      body: JSON.stringify({ input: { prompt } }),
    });
    const id = (created.ids as string[] | undefined)?.[0];
    if (!id) throw new Error(`create of item ${index} returned no id`);
    for (;;) {
      await sleep(pollMs);
      const status = await send(`/generations/${options.kind}/${encodeURIComponent(id)}`);
      if (status.terminal === true) {
        doneAt.push(Date.now());
        if (status.ready === true) stats.succeeded++;
        else stats.failed++;
        return;
      }
    }
  }

  let next = 0;
  const worker = async () => {
    while (next < options.prompts.length) {
      const index = next++;
      try {
        await runItem(index, options.prompts[index] ?? '');
      } catch {
        stats.failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 4 }, worker));
  return { ...stats, doneAt };
}
