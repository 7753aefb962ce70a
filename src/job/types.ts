/** Loaded and expanded jobs. Terms (job, step, item, upload set, media ref): docs/glossary.md. */
import type { GenerationRequest, Kind, Model } from '../contract/index.js';
import type { JobLimits } from './limits.js';
import type { NotifyTarget } from './notify-targets.js';
import type { MatrixValue, PickEntry } from './schema.js';
import type { JobSource } from './source-map.js';

export type TemplateValue = MatrixValue;
export type TemplateVars = Readonly<Record<string, TemplateValue>>;

export interface UploadSet {
  readonly id: string;
  readonly globs: readonly string[];
  /** Absolute paths, sorted, deduplicated. */
  readonly files: readonly string[];
  /** Its entry or a glob was refused (a job that failed to load): references to it are not checked. */
  readonly refused?: true;
}

export interface LoadedInfluencer {
  readonly id: string;
  readonly name: string;
  readonly username?: string;
  readonly style: 'realistic' | 'anime';
  readonly gender: 'male' | 'female';
  readonly images: { readonly uploadSet: string } | { readonly urls: readonly string[] };
  readonly consentAcknowledged: true;
}

export type InfluencerRef =
  | { readonly jobLocal: string }
  | { readonly id: string }
  | { readonly username: string };

/** How a step says its rows file is written (`encoding:`, `delimiter:`, `sheet:`). */
export interface RowsFormat {
  /** Text encoding when the file has no byte-order mark (default UTF-8). */
  readonly encoding?: string;
  /** `,` `;` a tab (`tab` or `"\t"`) or another single character; detected when absent. */
  readonly delimiter?: string;
  /** `.xlsx`: the sheet read (default the first). */
  readonly sheet?: string;
}

export interface LoadedStep {
  readonly id: string;
  /** Index in `generations` (for messages: `generations[i]`). */
  readonly index: number;
  /**
   * Keys whose value the schema refused, in a job that failed to load and is
   * checked on for its other mistakes: the checks that need them are skipped.
   */
  readonly refused?: ReadonlySet<string>;
  readonly modelId: string;
  readonly influencer?: InfluencerRef;
  readonly copies?: number;
  readonly count: number;
  readonly matrix?: Readonly<Record<string, unknown>>;
  /** Absolute path of the rows file. */
  readonly rows?: string;
  /**
   * `key:` of a step with `rows:`: the columns that name a row, so its item
   * key is theirs alone (other values changed: the same item, changed).
   */
  readonly key?: readonly string[];
  /** The `from:` step's id (`from: photos`, or `step:` of `from: { step, pick }`). */
  readonly from?: string;
  /** `from: { pick }`: only the source images matching one entry are animated. */
  readonly pick?: readonly PickEntry[];
  readonly input: Readonly<Record<string, unknown>>;
  readonly retries: number;
  readonly retrySafetyBlocked: boolean;
  readonly filename: string;
  /** Deadline for a generation to become terminal, in ms. */
  readonly timeoutMs?: number;
  /** How the rows file is written (`encoding:`, `delimiter:`, `sheet:`), as given. */
  readonly rowsFormat?: RowsFormat;
}

export interface LoadedJob {
  /** Absolute path of the job file. */
  readonly file: string;
  /** Directory of the job file: relative paths resolve against it. */
  readonly dir: string;
  /** sha256 (hex) of the job file's raw text. */
  readonly textHash: string;
  readonly name: string;
  readonly budget?: number;
  /** `allOrNothing:`: a run starts only when the plan's total fits (docs/run.md). */
  readonly allOrNothing: boolean;
  /** `trainingEstimate:`: credits of one training until the account's first training charge is known. */
  readonly trainingEstimate?: number;
  /** `tags:` (name -> text), empty when the job has none: recorded on each run for `ibatch costs`. */
  readonly tags: Readonly<Record<string, string>>;
  /** Absolute output directory (default `out/<name>` beside the job file). */
  readonly output: string;
  /** `notify:`: where the end of each `run` is POSTed. */
  readonly notify: readonly NotifyTarget[];
  /** `deliver:`: where each run copies its outputs (`approved`: only the approved ones). */
  readonly deliver?: { readonly to: string; readonly approved: boolean };
  readonly uploads: ReadonlyMap<string, UploadSet>;
  readonly influencers: ReadonlyMap<string, LoadedInfluencer>;
  /** Steps in dependency order (a `from:` source before its dependants). */
  readonly steps: readonly LoadedStep[];
  /** The parsed YAML with positions, for later issues. */
  readonly source: JobSource;
  /** The ceilings it was loaded with (expansion checks `maxItems`); defaults when absent. */
  readonly limits?: JobLimits;
}

export type MediaRef =
  | { readonly field: string; readonly index?: number; readonly path: string }
  | {
      readonly field: string;
      readonly index?: number;
      readonly path: { readonly uploadSet: string; readonly file: string };
    };

export interface JobItem {
  readonly stepId: string;
  /** Stable key: readable slug plus a short hash of the step id and values. */
  readonly key: string;
  /** Human label, e.g. `scene=beach, #2`. */
  readonly label: string;
  /**
   * Readable name for file names (`{name}`): its values in job order, e.g.
   * `Bonjour Paris silk scarf`; a `from:` item's is its source's.
   */
  readonly name: string;
  readonly modelId: string;
  readonly kind: Kind;
  /**
   * The request to send, defaults applied. `influencerId` is left out when the
   * influencer is job-local (the engine fills it once trained), and
   * `generationId` is left out for `from:` items (the source output's id).
   * Media fields named in `mediaRefs` still hold the job file's reference.
   */
  readonly request: GenerationRequest;
  /** Output files this item produces when it succeeds (copies for images, 1 for videos). */
  readonly expectedOutputs: number;
  /** Template values (matrix/row values, and the source item's for `from:`). */
  readonly vars: TemplateVars;
  /** 0-based repeat index (`count`). */
  readonly countIndex: number;
  readonly influencer?: InfluencerRef;
  readonly source?: {
    readonly stepId: string;
    readonly itemKey: string;
    readonly outputIndex: number;
  };
  readonly mediaRefs: readonly MediaRef[];
  /**
   * Its step names rows by `key:`: its key is the key columns' alone, so all
   * its values go into its identity hash (a changed value is a changed item).
   */
  readonly keyed?: true;
}

/** Model contracts by id. */
export type ModelCatalog = ReadonlyMap<string, Model>;
