/**
 * In-memory state of the emulator: accounts (with their keys, credits and
 * resources), the credit ledger, and the queue of failures whose refund is
 * due. Everything per account, so accounts never see each other.
 *
 * Glossary: a *charge* debits credits when a create is accepted; a *refund*
 * credits them back at the moment a charged generation or training fails.
 */
import { API_KEY_PREFIX, type Kind } from '../contract/index.js';
import { ACCOUNT_SEED_DEFAULTS, type AccountSeed } from './options.js';
import type { Prng } from './prng.js';

export interface LedgerEntry {
  seq: number;
  accountId: string;
  type: 'charge' | 'refund';
  amount: number;
  /** Generation ids (a charge of a multi-copy create lists all). */
  generationIds?: string[];
  trainingId?: string;
  idempotencyKey?: string;
  /** ISO time the entry took effect (a refund: when the job failed). */
  at: string;
  balanceAfter: number;
}

export type GenerationOutcome = 'success' | 'failed' | 'blocked' | 'never';

export interface GenerationRecord {
  id: string;
  accountId: string;
  taskId: string;
  modelId: string;
  kind: Kind;
  prompt: string;
  createdAt: number;
  processingAt: number;
  terminalAt: number;
  outcome: GenerationOutcome;
  creditsCost: number;
  refunded: boolean;
  index: number;
  /** How a safety block is shown (fixed when the generation is created). */
  blockStyle?: 'blocked' | 'refunded' | 'success-no-url';
}

export interface TrainingRecord {
  id: string;
  accountId: string;
  influencerId: string;
  createdAt: number;
  processingAt: number;
  /** Start of LoRA training (equals processingAt when the character sheet is skipped). */
  loraAt: number;
  terminalAt: number;
  fails: boolean;
  creditsCost: number;
  refunded: boolean;
  skipCharacterSheet: boolean;
}

export interface InfluencerRecord {
  id: string;
  name: string;
  username: string;
  trainingId: string;
}

export interface AssetRecord {
  id: string;
  accountId: string;
  mimeType: string;
  ext: string;
  sizeBytes: number;
  token: string;
  expiresAt: number;
  uploaded: boolean;
  bytes?: Buffer;
}

export interface AccountState {
  id: string;
  apiKeys: string[];
  credits: number;
  plan: string;
  email: string;
  name: string;
  generations: Map<string, GenerationRecord>;
  /** Newest last; history reads walk it backwards. */
  generationOrder: GenerationRecord[];
  trainings: Map<string, TrainingRecord>;
  influencers: Map<string, InfluencerRecord>;
  assets: Map<string, AssetRecord>;
}

interface DueRefund {
  at: number;
  apply: () => void;
}

export class Store {
  readonly accounts = new Map<string, AccountState>();
  private readonly byKey = new Map<string, AccountState>();
  private readonly revoked = new Set<string>();
  readonly ledger: LedgerEntry[] = [];
  /** Sorted by `at`; drained by `settle`. */
  private dueRefunds: DueRefund[] = [];
  private seq = 0;

  constructor(seeds: readonly AccountSeed[], ids: Prng) {
    seeds.forEach((seed, i) => {
      const id = seed.id ?? `acct_${i + 1}_${ids.hex(8)}`;
      const apiKey = seed.apiKey ?? `${API_KEY_PREFIX}${ids.hex(32)}`;
      if (!apiKey.startsWith(API_KEY_PREFIX)) {
        throw new TypeError(`Expected account api keys to start with ${API_KEY_PREFIX}`);
      }
      const account: AccountState = {
        id,
        apiKeys: [apiKey],
        credits: seed.credits ?? ACCOUNT_SEED_DEFAULTS.credits,
        plan: seed.plan ?? ACCOUNT_SEED_DEFAULTS.plan,
        email: seed.email ?? `creator${i + 1}@example.test`,
        name: seed.name ?? `Creator ${i + 1}`,
        generations: new Map(),
        generationOrder: [],
        trainings: new Map(),
        influencers: new Map(),
        assets: new Map(),
      };
      this.accounts.set(id, account);
      this.byKey.set(apiKey, account);
    });
  }

  /** The account of a live key; undefined for unknown or revoked keys. */
  accountForKey(apiKey: string): AccountState | undefined {
    if (this.revoked.has(apiKey)) return undefined;
    return this.byKey.get(apiKey);
  }

  revokeKey(apiKey: string): boolean {
    if (!this.byKey.has(apiKey)) return false;
    this.revoked.add(apiKey);
    return true;
  }

  /** Adds a live key to an account (what a user does after a revocation); undefined for an unknown account. */
  issueKey(accountId: string, apiKey: string): string | undefined {
    const account = this.accounts.get(accountId);
    if (!account) return undefined;
    account.apiKeys.push(apiKey);
    this.byKey.set(apiKey, account);
    return apiKey;
  }

  charge(account: AccountState, amount: number, at: number, ref: Partial<LedgerEntry>): void {
    account.credits = round2(account.credits - amount);
    this.record(account, 'charge', amount, at, ref);
  }

  /** Schedules a refund at `at` (applied by the first `settle` at or after it). */
  scheduleRefund(at: number, apply: () => void): void {
    const item = { at, apply };
    let lo = 0;
    let hi = this.dueRefunds.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.dueRefunds[mid]?.at ?? 0) <= at) lo = mid + 1;
      else hi = mid;
    }
    this.dueRefunds.splice(lo, 0, item);
  }

  refund(account: AccountState, amount: number, at: number, ref: Partial<LedgerEntry>): void {
    account.credits = round2(account.credits + amount);
    this.record(account, 'refund', amount, at, ref);
  }

  /** Applies every refund whose failure time has passed; call before any read. */
  settle(now: number): void {
    if (this.dueRefunds.length === 0 || (this.dueRefunds[0]?.at ?? Infinity) > now) return;
    let n = 0;
    while (n < this.dueRefunds.length && (this.dueRefunds[n]?.at ?? Infinity) <= now) {
      this.dueRefunds[n]?.apply();
      n++;
    }
    this.dueRefunds = this.dueRefunds.slice(n);
  }

  private record(
    account: AccountState,
    type: 'charge' | 'refund',
    amount: number,
    at: number,
    ref: Partial<LedgerEntry>,
  ): void {
    this.ledger.push({
      ...ref,
      seq: ++this.seq,
      accountId: account.id,
      type,
      amount,
      at: new Date(at).toISOString(),
      balanceAfter: account.credits,
    });
  }
}

export function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
