/**
 * Checks made before anything is spent (`validate` online, `plan`, and `run`
 * before its first create): what the job names on the service must be there.
 *
 * - Existing influencers (`influencer:` an id or a username) are on the
 *   account and ready: one `GET /influencers`, only when the job names one
 *   or gives a job-local influencer a `username` (which must not be taken by
 *   an influencer this job did not train: the journal's trainings, or the
 *   one the output folder's manifest says this influencer made outputs with,
 *   after a lost journal).
 * - Media URLs written in the job (not local files, not upload sets) are on
 *   an origin where this service serves its assets: the origin of its base
 *   URL, or one of the asset URLs it returned earlier (the journal). The
 *   service serves no way to tell one account's asset from another's on the
 *   same origin, so that case is left to the service, which refuses it
 *   before billing (docs/faults.md, "Checked before spending").
 *
 * A failure is a job file error (exit 2) at the field, with what was found.
 */
import {
  isUrl,
  JobFileError,
  type JobIssue,
  type JobItem,
  jobIssueAt,
  type KeyPath,
  type LoadedJob,
  MEDIA_FIELD_TYPES,
  type ModelCatalog,
} from '../job/index.js';
import { type Journal, openJournalIfAny } from '../journal/index.js';
import { isRowOfJob, readManifest } from '../outputs/index.js';
import { trainingItemKey } from './decide/item-identity.js';
import { InfluencerDirectory, type InfluencerLister } from './influencer-directory.js';

/** The journal reads the checks use (a read-only journal offers them). */
export type PreflightJournal = Pick<
  Journal,
  'assetUrlsOfService' | 'listJobInfluencers' | 'findUnfinishedRun' | 'getOpenAttempt'
>;

interface UrlUse {
  readonly path: KeyPath;
  readonly label: string;
}

/** Collects the media URLs a job's items send, then checks them and its influencers. */
export class Preflight {
  readonly #urls = new Map<string, UrlUse>();

  constructor(
    private readonly job: LoadedJob,
    private readonly catalog: ModelCatalog,
  ) {
    for (const spec of job.influencers.values()) {
      if (!('urls' in spec.images)) continue;
      spec.images.urls.forEach((url, i) => {
        this.#note(url, ['influencers', spec.id, 'images', i], `influencer ${spec.id}`);
      });
    }
  }

  /** Notes the URLs in an item's media fields (the first item using one names it). */
  add(item: JobItem): void {
    const model = this.catalog.get(item.modelId);
    const step = this.job.steps.find((s) => s.id === item.stepId);
    if (!model || !step) return;
    for (const field of model.fields) {
      if (!MEDIA_FIELD_TYPES.has(field.type)) continue;
      const value = item.request.input[field.name];
      const list: unknown[] = Array.isArray(value) ? value : [value];
      list.forEach((entry, i) => {
        if (typeof entry !== 'string' || !isUrl(entry)) return;
        const at = Array.isArray(value) ? [field.name, i] : [field.name];
        this.#note(entry, ['generations', step.index, 'input', ...at], `item ${item.label}`);
      });
    }
  }

  #note(url: string, path: KeyPath, label: string): void {
    if (!this.#urls.has(url)) this.#urls.set(url, { path, label });
  }

  /** Throws JobFileError (exit 2) listing every problem; reads the influencer list at most once. */
  async check(context: {
    /** The service's base URL. */
    readonly service: string;
    readonly influencers: InfluencerDirectory;
    readonly journal?: PreflightJournal | undefined;
  }): Promise<void> {
    const issues = [
      ...this.#urlIssues(context.service, context.journal),
      ...(await this.#influencerIssues(context.influencers, context.journal)),
    ];
    if (issues.length > 0) throw new JobFileError(issues, this.job.source.text);
  }

  #urlIssues(service: string, journal: PreflightJournal | undefined): JobIssue[] {
    if (this.#urls.size === 0) return [];
    const home = new URL(service).origin;
    const origins = new Set([home]);
    for (const url of journal?.assetUrlsOfService(service) ?? []) {
      const origin = originOf(url);
      if (origin) origins.add(origin);
    }
    const issues: JobIssue[] = [];
    for (const [url, use] of this.#urls) {
      const origin = originOf(url);
      if (origin && origins.has(origin)) continue;
      issues.push(
        jobIssueAt(
          this.job,
          use.path,
          `${use.label}: ${url} is not an asset of this service (its assets are served from ${[...origins].join(', ')}); the service takes only assets uploaded by this account and its own outputs: give the local file or an upload set instead`,
        ),
      );
    }
    return issues;
  }

  async #influencerIssues(
    directory: InfluencerDirectory,
    journal: PreflightJournal | undefined,
  ): Promise<JobIssue[]> {
    const named = this.job.steps.filter((s) => s.influencer && !('jobLocal' in s.influencer));
    const handles = [...this.job.influencers.values()].filter((i) => i.username !== undefined);
    if (named.length === 0 && handles.length === 0) return [];
    const entries = await directory.entries();
    const issues: JobIssue[] = [];
    for (const step of named) {
      const ref = step.influencer;
      if (!ref || 'jobLocal' in ref) continue;
      const name = 'id' in ref ? ref.id : ref.username;
      const path = ['generations', step.index, 'influencer'];
      const found = await directory.find(name);
      if (!found) {
        const guess = 'username' in ref ? await directory.closestUsername(name) : undefined;
        const hint = guess
          ? ` (did you mean \`${guess}\`?)`
          : entries.length === 0
            ? ' (the account has no influencers)'
            : ` (its influencers: ${entries.map((e) => e.username).join(', ')})`;
        issues.push(
          jobIssueAt(this.job, path, `influencer \`${name}\` is not on this account${hint}`),
        );
      } else if (!found.ready) {
        issues.push(
          jobIssueAt(
            this.job,
            path,
            `influencer \`${name}\` is not ready (status ${found.status}): wait until \`ibatch influencers\` shows it ready`,
          ),
        );
      }
    }
    const ours = journal?.listJobInfluencers(this.job.name) ?? [];
    for (const spec of handles) {
      const username = spec.username ?? '';
      const taken = await directory.find(username);
      if (!taken || taken.username.toLowerCase() !== username.toLowerCase()) continue;
      // This job's own training holds the name, or may: a create sent and its
      // answer lost names no influencer yet (and a journal written before
      // intents cleared them may still show an earlier attempt's).
      const mine = ours.some(
        (r) => r.localId === spec.id && (r.influencerId === taken.id || r.status === 'intent'),
      );
      if (mine || sentBy(this.job, journal, spec.id) || madeWith(this.job, spec.id, taken.id))
        continue;
      issues.push(
        jobIssueAt(
          this.job,
          ['influencers', spec.id, 'username'],
          `username \`${username}\` is already taken by this account's influencer ${taken.id} (${taken.ready ? 'ready' : `status ${taken.status}`}): to use it, write \`influencer: ${taken.username}\` in the steps instead of training \`${spec.id}\`, or choose another username`,
        ),
      );
    }
    return issues;
  }
}

/**
 * Whether the job's unfinished run has the influencer's training create open
 * (sent, or maybe sent, its answer not recorded): the spend protocol's own
 * word, for a journal whose training record lags its attempt (one written
 * before the two were committed together).
 */
function sentBy(job: LoadedJob, journal: PreflightJournal | undefined, localId: string): boolean {
  const run = journal?.findUnfinishedRun(job.name);
  return (
    run !== undefined && journal?.getOpenAttempt(run.runId, trainingItemKey(localId)) !== undefined
  );
}

/** Whether the job's output folder has outputs its influencer `localId` made as `influencerId`. */
function madeWith(job: LoadedJob, localId: string, influencerId: string): boolean {
  const rows = readManifest(
    job.output,
    (row) =>
      isRowOfJob(row, job.name) && row.influencer === localId && row.influencerId === influencerId,
  );
  return rows.length > 0;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * `validate` online: the checks of a job whose items went to `preflight`,
 * with the job's journal read (never created, never locked) when there is one.
 */
export async function checkBeforeSpending(
  preflight: Preflight,
  client: InfluencerLister & { readonly baseUrl: string },
  journalPath: string,
): Promise<void> {
  const journal = await openJournalIfAny(journalPath);
  try {
    await preflight.check({
      service: client.baseUrl,
      influencers: new InfluencerDirectory(client),
      journal,
    });
  } finally {
    journal?.close();
  }
}

/**
 * The preflight's problems of a job whose file has other mistakes, for the
 * same report (`validate`, `plan` and `run` all list them at once). A check
 * that cannot be made (the service did not answer) adds nothing: the file's
 * own mistakes are the answer, and a valid file meets the preflight again.
 */
export async function issuesBeforeSpending(
  preflight: Preflight,
  client: InfluencerLister & { readonly baseUrl: string },
  journalPath: string,
): Promise<readonly JobIssue[]> {
  try {
    await checkBeforeSpending(preflight, client, journalPath);
    return [];
  } catch (error) {
    return error instanceof JobFileError ? error.issues : [];
  }
}
