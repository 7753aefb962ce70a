/**
 * Detects when in-flight generations finish with as few requests as possible.
 *
 * One `GET /generations?kind=K&limit=50` covers every in-flight generation of
 * a kind. A generation that carries its item's only output completes from its
 * history entry when that entry alone proves the success (`settledFromHistory`
 * of src/contract: success status and an output URL): no request of its own.
 * Any other entry that looks finished (or shows an output URL) costs a status
 * read by id, which carries `terminal`, `refunded`, `urls` and `error`
 * (history entries lack them): several copies, an unknown or failed status, a
 * success without a URL (a safety block). An id the history page does not
 * show (other users of the account pushed it out) falls back to reading it by
 * id. At steady state that is one create per generation plus a history poll
 * shared by up to 50 of them; docs/polling.md has the case-by-case reasons.
 *
 * Poll cadence: a poll is due when some watched generation is expected to be
 * done (from the model's typical latency), but never sooner than `minGapMs`
 * after the previous one, and, while many generations are in flight, no more
 * often than the request budget per generation allows (`pollsPerCreate`).
 */
import { setMaxListeners } from 'node:events';
import {
  type GenerationHistory,
  type GenerationStatus,
  historyMayBeDone,
  type Kind,
  settledFromHistory,
} from '../contract/index.js';
import { IbatchError } from '../shared/errors.js';
import { EXIT } from '../shared/exit-codes.js';
import { sleep } from '../shared/sleep.js';
import { isNotFound, NOT_FOUND_READS, NotKnownToServiceError } from './not-known.js';
import { RUN_DEFAULTS } from './types.js';

/** The two reads the watcher needs (the service client satisfies it). */
export interface GenerationReader {
  listGenerations(
    kind: Kind,
    options?: { readonly limit?: number; readonly signal?: AbortSignal },
  ): Promise<GenerationHistory>;
  getGeneration(
    kind: Kind,
    id: string,
    options?: { readonly signal?: AbortSignal },
  ): Promise<GenerationStatus>;
}

export interface WatcherOptions {
  /** Fewest milliseconds between two history polls of one kind. @default 1000 */
  readonly minGapMs?: number;
  /** Most milliseconds between two history polls while something is watched. @default 20000 */
  readonly maxGapMs?: number;
  /** History polls allowed per created generation while the pipeline is busy. @default 0.12 */
  readonly pollsPerCreate?: number;
  /**
   * True while creates are queued (the pipeline is busy): only then does
   * `pollsPerCreate` bound the cadence. Without it the budget always applies.
   */
  readonly createsWaiting?: () => boolean;
  /** @default 50 (the reference's maximum) */
  readonly historyLimit?: number;
  /**
   * Complete a single-output generation from its history entry when the entry
   * proves the success; false reads every generation by id (the benchmark's
   * baseline). @default true
   */
  readonly completeFromHistory?: boolean;
  /** Consecutive history polls that miss an id before it is read by id. @default 2 */
  readonly missesBeforeDirectRead?: number;
  /**
   * Consecutive reads by id answering 404 before the watch rejects with
   * NotKnownToServiceError. One 404 right after a create could be a service
   * catching up; several, a poll gap apart, are not. @default NOT_FOUND_READS
   */
  readonly notFoundReads?: number;
  readonly now?: () => number;
  /** Called after each request the watcher makes (for metrics). */
  readonly onRequest?: (kind: 'history' | 'status') => void;
  /** Called when a poll fails; the watcher keeps going. */
  readonly onError?: (error: unknown) => void;
}

export interface WatchOptions {
  /** When the generation is expected to be done (epoch ms). */
  readonly expectedAt: number;
  /** Give up after this time (epoch ms): rejects with GenerationDeadlineError. */
  readonly deadlineAt?: number;
  /**
   * The generation carries its item's only output (one id, one copy): a
   * history entry proving its success may complete it without a read by id.
   * @default false
   */
  readonly singleOutput?: boolean;
}

export class GenerationDeadlineError extends IbatchError {
  constructor(
    readonly generationId: string,
    deadlineAt: number,
  ) {
    super(
      'generation_deadline',
      `generation ${generationId} did not finish before its deadline (${new Date(deadlineAt).toISOString()}); it may still finish on the service`,
      EXIT.itemsFailed,
    );
  }
}

interface Watched {
  readonly id: string;
  readonly kind: Kind;
  readonly expectedAt: number;
  readonly deadlineAt: number | undefined;
  /** Whether a history entry may settle it (false once any watcher of the id says otherwise). */
  singleOutput: boolean;
  misses: number;
  /** Consecutive reads by id that answered 404. */
  notFound: number;
  resolve(status: GenerationStatus): void;
  reject(error: unknown): void;
}

export class CompletionWatcher {
  private readonly watched = new Map<string, Watched>();
  private readonly lastPollAt = new Map<Kind, number>();
  private readonly createTimes: number[] = [];
  private readonly loops = new Map<Kind, Promise<void>>();
  private readonly wakers = new Set<() => void>();
  private readonly abort = new AbortController();
  private readonly opts: Required<
    Omit<WatcherOptions, 'onRequest' | 'onError' | 'createsWaiting'>
  > &
    Pick<WatcherOptions, 'onRequest' | 'onError' | 'createsWaiting'>;

  constructor(
    private readonly reader: GenerationReader,
    options: WatcherOptions = {},
  ) {
    // Every concurrent status read listens on this signal.
    setMaxListeners(0, this.abort.signal);
    this.opts = {
      minGapMs: options.minGapMs ?? 1000,
      maxGapMs: options.maxGapMs ?? 20_000,
      pollsPerCreate: options.pollsPerCreate ?? 0.12,
      historyLimit: options.historyLimit ?? 50,
      completeFromHistory: options.completeFromHistory ?? RUN_DEFAULTS.completeFromHistory,
      missesBeforeDirectRead: options.missesBeforeDirectRead ?? 2,
      notFoundReads: options.notFoundReads ?? NOT_FOUND_READS,
      now: options.now ?? Date.now,
      onRequest: options.onRequest,
      onError: options.onError,
      createsWaiting: options.createsWaiting,
    };
  }

  /** Number of generations being watched. */
  get size(): number {
    return this.watched.size;
  }

  /** What is watched, per kind, and the first deadline (the run's wait reports). */
  waiting(): { readonly byKind: ReadonlyMap<Kind, number>; readonly firstDeadlineAt?: number } {
    const byKind = new Map<Kind, number>();
    let first = Number.POSITIVE_INFINITY;
    for (const w of this.watched.values()) {
      byKind.set(w.kind, (byKind.get(w.kind) ?? 0) + 1);
      first = Math.min(first, w.deadlineAt ?? first);
    }
    return Number.isFinite(first) ? { byKind, firstDeadlineAt: first } : { byKind };
  }

  /** Tells the watcher a generation was created now (drives the poll budget). */
  noteCreated(): void {
    this.createTimes.push(this.opts.now());
  }

  /** Resolves with the terminal status of the generation. */
  watch(kind: Kind, id: string, options: WatchOptions): Promise<GenerationStatus> {
    // Stopped already (a hard stop raced this item's 202): no loop would ever
    // settle the watch, and the run would wait for it forever.
    if (this.abort.signal.aborted) return Promise.reject(this.abort.signal.reason);
    const existing = this.watched.get(id);
    if (existing) {
      // Two watchers of one id: the history may settle it only if both allow it.
      existing.singleOutput &&= options.singleOutput === true;
      return new Promise((resolve, reject) => {
        const { resolve: r0, reject: j0 } = existing;
        existing.resolve = (status) => {
          r0(status);
          resolve(status);
        };
        existing.reject = (error) => {
          j0(error);
          reject(error);
        };
      });
    }
    return new Promise((resolve, reject) => {
      this.watched.set(id, {
        id,
        kind,
        expectedAt: options.expectedAt,
        deadlineAt: options.deadlineAt,
        singleOutput: options.singleOutput === true,
        misses: 0,
        notFound: 0,
        resolve,
        reject,
      });
      this.ensureLoop(kind);
      this.wake();
    });
  }

  /** Stops polling; pending watches reject with `reason`. */
  stop(reason: unknown = new Error('watcher stopped')): void {
    this.abort.abort(reason);
    for (const w of this.watched.values()) w.reject(reason);
    this.watched.clear();
    this.wake();
  }

  private ensureLoop(kind: Kind): void {
    if (this.loops.has(kind)) return;
    const loop = this.runLoop(kind).finally(() => this.loops.delete(kind));
    this.loops.set(kind, loop);
  }

  private ofKind(kind: Kind): Watched[] {
    return [...this.watched.values()].filter((w) => w.kind === kind);
  }

  private async runLoop(kind: Kind): Promise<void> {
    while (!this.abort.signal.aborted) {
      const pending = this.ofKind(kind);
      if (pending.length === 0) return;
      const dueAt = this.nextPollAt(kind, pending);
      const wait = dueAt - this.opts.now();
      if (wait > 0) {
        await this.sleep(wait);
        continue; // re-evaluate: new watches may move the due time
      }
      this.lastPollAt.set(kind, this.opts.now());
      try {
        await this.pollOnce(kind);
      } catch (error) {
        if (this.abort.signal.aborted) return;
        this.opts.onError?.(error);
      }
    }
  }

  private nextPollAt(kind: Kind, pending: readonly Watched[]): number {
    const now = this.opts.now();
    const last = this.lastPollAt.get(kind) ?? 0;
    const earliestExpected = Math.min(...pending.map((w) => w.expectedAt));
    const earliestDeadline = Math.min(
      ...pending.map((w) => w.deadlineAt ?? Number.POSITIVE_INFINITY),
    );
    const gap = Math.min(this.opts.maxGapMs, Math.max(this.opts.minGapMs, this.budgetGap(now)));
    const due = Math.max(last + gap, Math.min(earliestExpected, last + this.opts.maxGapMs));
    return Math.min(due, earliestDeadline);
  }

  /** The gap that keeps history polls within `pollsPerCreate` of the recent create rate. */
  private budgetGap(now: number): number {
    // Nothing left to create: no create competes for requests any more, and
    // how soon the last completions are seen is all that matters.
    if (this.opts.createsWaiting && !this.opts.createsWaiting()) return 0;
    const horizon = 60_000;
    while (this.createTimes.length > 0 && (this.createTimes[0] ?? 0) < now - horizon) {
      this.createTimes.shift();
    }
    const recent = this.createTimes.length;
    if (recent < 10) return 0;
    const span = Math.max(1, now - (this.createTimes[0] ?? now));
    const createsPerMs = recent / span;
    return 1 / (createsPerMs * this.opts.pollsPerCreate);
  }

  private async pollOnce(kind: Kind): Promise<void> {
    const signal = this.abort.signal;
    const history = await this.reader.listGenerations(kind, {
      limit: this.opts.historyLimit,
      signal,
    });
    this.opts.onRequest?.('history');
    const seen = new Map(history.generations.map((g) => [g.id, g]));
    const toRead: Watched[] = [];
    const now = this.opts.now();
    for (const w of this.ofKind(kind)) {
      const entry = seen.get(w.id);
      if (entry) {
        w.misses = 0;
        const settled =
          w.singleOutput && this.opts.completeFromHistory
            ? settledFromHistory(kind, entry)
            : undefined;
        if (settled) {
          this.watched.delete(w.id);
          w.resolve(settled);
          continue;
        }
        if (historyMayBeDone(entry)) toRead.push(w);
      } else if (++w.misses >= this.opts.missesBeforeDirectRead) {
        toRead.push(w);
      }
      if (w.deadlineAt !== undefined && now >= w.deadlineAt && !toRead.includes(w)) toRead.push(w);
    }
    await Promise.all(toRead.map((w) => this.readOne(w)));
  }

  private async readOne(w: Watched): Promise<void> {
    let status: GenerationStatus;
    try {
      status = await this.reader.getGeneration(w.kind, w.id, { signal: this.abort.signal });
    } catch (error) {
      if (!isNotFound(error) || this.abort.signal.aborted) throw error;
      this.opts.onRequest?.('status');
      if (++w.notFound < this.opts.notFoundReads) throw error;
      this.watched.delete(w.id);
      w.reject(new NotKnownToServiceError('generation', w.id, w.notFound));
      return;
    }
    w.notFound = 0;
    this.opts.onRequest?.('status');
    if (status.terminal) {
      this.watched.delete(w.id);
      w.resolve(status);
      return;
    }
    w.misses = 0;
    if (w.deadlineAt !== undefined && this.opts.now() >= w.deadlineAt) {
      this.watched.delete(w.id);
      w.reject(new GenerationDeadlineError(w.id, w.deadlineAt));
    }
  }

  /** Sleeps `ms`, or until `wake()`. */
  private async sleep(ms: number): Promise<void> {
    const woken = new AbortController();
    const wake = () => woken.abort();
    this.wakers.add(wake);
    try {
      await sleep(ms, woken.signal);
    } catch {
      // Woken early: the loop polls now.
    } finally {
      this.wakers.delete(wake);
    }
  }

  private wake(): void {
    for (const waker of [...this.wakers]) waker();
  }
}
