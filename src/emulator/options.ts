/**
 * Options of `startEmulator`, their defaults, and the runtime-switchable
 * behaviours that stand in for the reference's "not shown" items.
 */
import type { Bucket, EndpointId, RateWindow } from '../contract/index.js';
import type { FaultKind } from './fault-kinds.js';

export type StatusCase = 'lower' | 'title' | 'upper';

export type OutputUrlStyle =
  | 'plain'
  | 'hostile'
  | 'data'
  | 'ftp'
  | 'file'
  | 'javascript'
  | 'cross-origin-redirect'
  | 'html-body'
  | 'not-media';

/** One switch per "not shown" item of the reference a client must cope with. */
export interface Behaviour {
  /** Status of an idempotent replay of a create. @default 202 */
  replayStatus: 202 | 200;
  /** Case of status strings on the poll endpoints. @default 'lower' */
  statusCase: StatusCase;
  /** Case of status strings in `GET /generations` (the reference's sample shows `Success`). @default 'title' */
  historyStatusCase: StatusCase;
  /** `limit` of `GET /generations` when absent. @default 20 */
  historyDefaultLimit: number;
  /** What an out-of-range `limit` does: 400 or clamp to 1..50. @default 'reject' */
  historyLimitOutOfRange: 'reject' | 'clamp';
  /**
   * How a safety-blocked generation looks: `blocked` (status `blocked`, terminal,
   * charged, not refunded, no url), `refunded` (status `failed`, refunded), or
   * `success-no-url` (status `success`, ready, no url). @default 'blocked'
   */
  safetyBlock: 'blocked' | 'refunded' | 'success-no-url';
  /** Shape of enum `options` entries. @default 'object' ({value,label}) */
  optionShape: 'object' | 'bare';
  /** Error for an external/cross-account/non-image training asset URL. @default 'validation_error' */
  trainingAssetError: 'validation_error' | 'not_found';
  /** Media inputs of generations: owned assets/outputs only, or any http(s) URL. @default 'owned' */
  mediaInputs: 'owned' | 'any-url';
  /** A presigned PUT carrying Authorization is recorded, then accepted or rejected (400). @default 'accept' */
  uploadAuthorization: 'accept' | 'reject';
  /** Rate-limit algorithm. @default 'sliding' (sliding window log) */
  rateLimitAlgorithm: 'sliding' | 'fixed';
  /**
   * Whether preview-credits resolves references like a create (media URLs are
   * owned assets/outputs; `influencerId`/`generationId` exist, are owned and
   * ready). Off: shape checks only, so work whose inputs are made at run time
   * can be quoted. Creates always resolve them. @default false
   */
  previewChecksReferences: boolean;
  /**
   * Shape of output URLs. `hostile` adds a path segment a careless client
   * might turn into a file name (`..%2F` climbs, `%00`, a backslash, a
   * ~3,000-character name) so path-escape tests have a server to fight.
   * The others are URLs no download can ever succeed from:
   * another scheme (`data:`, `ftp:`, `file:`, `javascript:`), a 307 to the
   * upload origin (`cross-origin-redirect`), an HTML page (`html-body`) or
   * HTML bytes declared `image/png` / `video/mp4` (`not-media`). The style
   * is baked into the URL, so a URL handed out keeps misbehaving after the
   * switch is turned back. @default 'plain' (`/files/<id>/0.png`)
   */
  outputUrlStyle: OutputUrlStyle;
  /**
   * A careless service that quotes the caller's API key (verbatim, URL-encoded,
   * its secret part, base64) in every error text it returns: error bodies'
   * `message` and `details`, generations' and trainings' `error`. Security
   * tests use it to prove the key never reaches disk. @default false
   */
  echoKeyInErrors: boolean;
  /**
   * Format of image outputs (the reference does not show it): PNG, baseline
   * JPEG or lossless WebP, each with bytes of its own per generation. Part of
   * the URL (`0.png`, `0.jpg`, `0.webp`) like `outputUrlStyle`. @default 'png'
   */
  imageFormat: ImageFormat;
  /**
   * Real milliseconds (never scaled) each generation's output file waits
   * before it is sent: a slow file host or a slow link, for tests of a
   * client whose downloads fall behind its creates. @default 0
   */
  outputDelayMs: number;
}

export type ImageFormat = 'png' | 'jpeg' | 'webp';

export const DEFAULT_BEHAVIOUR: Readonly<Behaviour> = {
  replayStatus: 202,
  statusCase: 'lower',
  historyStatusCase: 'title',
  historyDefaultLimit: 20,
  historyLimitOutOfRange: 'reject',
  safetyBlock: 'blocked',
  optionShape: 'object',
  trainingAssetError: 'validation_error',
  mediaInputs: 'owned',
  uploadAuthorization: 'accept',
  rateLimitAlgorithm: 'sliding',
  previewChecksReferences: false,
  outputUrlStyle: 'plain',
  echoKeyInErrors: false,
  imageFormat: 'png',
  outputDelayMs: 0,
};

/** The defaults of {@link FaultConfig} and {@link FaultScript} that are values, written once. */
export const FAULT_DEFAULTS = {
  slowMs: 1500,
  hugeBodyBytes: 16 * 1024 * 1024,
  retryAfter: '1',
  times: 1,
} as const;

/** Probabilistic faults: a probability 0..1 per fault kind, optionally per endpoint. */
export interface FaultConfig {
  /** Probability of each fault on every endpoint where it applies. @default none: no fault */
  rates?: Partial<Record<FaultKind, number>>;
  /** Per-endpoint probabilities; they replace `rates` for that endpoint. @default none */
  perEndpoint?: Partial<Record<EndpointId, Partial<Record<FaultKind, number>>>>;
  /** Delay of the `slow` fault, real ms. @default 1500 */
  slowMs?: number;
  /** Size of the `huge-body` response. @default 16777216 (16 MiB) */
  hugeBodyBytes?: number;
  /**
   * The `Retry-After` header of the `rate-limit-burst` fault, verbatim
   * (delta-seconds or an HTTP-date; absurd values test the client's ceiling). @default '1'
   */
  retryAfter?: string;
}

/** "The next `times` matching requests get `fault`." */
export interface FaultScript {
  fault: FaultKind;
  /** Endpoint id from `ENDPOINTS`. @default any endpoint where the fault applies */
  endpoint?: EndpointId;
  /** Only requests of this account. @default every account */
  accountId?: string;
  /** @default 1 */
  times?: number;
}

/** The defaults of {@link AccountSeed} that are values, written once. */
export const ACCOUNT_SEED_DEFAULTS = {
  credits: 25_000,
  plan: 'pro',
} as const;

export interface AccountSeed {
  /** @default `acct_N_` and random hex (from `seed`) */
  id?: string;
  /** @default the key prefix and random hex (from `seed`) */
  apiKey?: string;
  /** @default 25000 */
  credits?: number;
  /** @default 'pro' */
  plan?: string;
  /** @default `creatorN@example.test` */
  email?: string;
  /** @default `Creator N` */
  name?: string;
}

/** The defaults of {@link EmulatorOptions} that are values, written once. */
export const EMULATOR_DEFAULTS = {
  host: '127.0.0.1',
  port: 0,
  uploadPort: 0,
  timeScale: 1,
  trainingMs: { queued: 2000, characterSheet: 10_000, lora: 20_000 },
  presignLifetimeSeconds: 120,
} as const;

export interface EmulatorOptions {
  /** @default '127.0.0.1' */
  host?: string;
  /** Port of the API/admin/files server; 0 picks a free one. @default 0 */
  port?: number;
  /** Port of the upload origin; 0 picks a free one. @default 0 */
  uploadPort?: number;
  /** Rate-limit windows and job latencies are divided by it. @default 1 */
  timeScale?: number;
  /** Seed of latencies, outcomes, faults, ids and keys. @default a random seed */
  seed?: number;
  /** @default two accounts, each with the {@link AccountSeed} defaults */
  accounts?: AccountSeed[];
  /** Overrides of the four buckets (before scaling). @default SERVICE_RATE_LIMITS */
  rateLimits?: Partial<Record<Bucket, RateWindow>>;
  /** Total latency range [min, max] in ms (before scaling) per model id. @default each model's own range (models.ts) */
  latency?: Record<string, readonly [number, number]>;
  /** Training phase durations in ms (before scaling). @default { queued: 2000, characterSheet: 10000, lora: 20000 } */
  trainingMs?: { queued?: number; characterSheet?: number; lora?: number };
  /** Probabilistic faults. @default none */
  faults?: FaultConfig;
  /** Switches for what the reference leaves unshown. @default DEFAULT_BEHAVIOUR */
  behaviour?: Partial<Behaviour>;
  /** Presigned URL lifetime in real seconds (not scaled). @default 120 */
  presignLifetimeSeconds?: number;
  /** Injectable clock (ms since epoch). @default Date.now */
  clock?: () => number;
}

export interface ResolvedOptions {
  host: string;
  port: number;
  uploadPort: number;
  timeScale: number;
  seed: number;
  accounts: AccountSeed[];
  rateLimits: Record<Bucket, RateWindow>;
  latency: Record<string, readonly [number, number]>;
  trainingMs: { queued: number; characterSheet: number; lora: number };
  faults: FaultConfig;
  behaviour: Behaviour;
  presignLifetimeSeconds: number;
  clock: () => number;
}

function expectPositive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new TypeError(`Expected \`${name}\` to be a positive number, got ${value}`);
  }
  return value;
}

export function resolveOptions(
  options: EmulatorOptions,
  serviceLimits: Record<Bucket, RateWindow>,
): ResolvedOptions {
  return {
    host: options.host ?? EMULATOR_DEFAULTS.host,
    port: options.port ?? EMULATOR_DEFAULTS.port,
    uploadPort: options.uploadPort ?? EMULATOR_DEFAULTS.uploadPort,
    timeScale: expectPositive('timeScale', options.timeScale ?? EMULATOR_DEFAULTS.timeScale),
    seed: options.seed ?? Math.floor(Math.random() * 2 ** 31),
    accounts: options.accounts ?? [{}, {}],
    rateLimits: { ...serviceLimits, ...options.rateLimits },
    latency: { ...options.latency },
    trainingMs: { ...EMULATOR_DEFAULTS.trainingMs, ...options.trainingMs },
    faults: options.faults ?? {},
    behaviour: { ...DEFAULT_BEHAVIOUR, ...options.behaviour },
    presignLifetimeSeconds: expectPositive(
      'presignLifetimeSeconds',
      options.presignLifetimeSeconds ?? EMULATOR_DEFAULTS.presignLifetimeSeconds,
    ),
    clock: options.clock ?? Date.now,
  };
}
