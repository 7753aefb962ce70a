/**
 * The account's influencers as `GET /influencers` lists them, read once per
 * directory and looked up by id or by username (case-insensitively: the
 * service refuses a username that differs from a taken one only in case).
 * The one home of that lookup: the preflight checks a job's references with
 * it before anything is spent, and the run resolves them from the same list.
 */
import type { InfluencerList } from '../contract/index.js';
import { closest } from '../job/index.js';

export type InfluencerEntry = InfluencerList['characters'][number];

/** The client call a directory needs (read-only). */
export interface InfluencerLister {
  listInfluencers(options?: { signal?: AbortSignal }): Promise<InfluencerList>;
}

export class InfluencerDirectory {
  #list: Promise<readonly InfluencerEntry[]> | undefined;

  constructor(
    private readonly client: InfluencerLister,
    private readonly signal?: AbortSignal,
  ) {}

  /** The list, fetched on first use (one request per directory). */
  entries(): Promise<readonly InfluencerEntry[]> {
    this.#list ??= this.client
      .listInfluencers(this.signal ? { signal: this.signal } : {})
      .then((list) => list.characters);
    return this.#list;
  }

  /** The influencer with this id, or this username in any case. */
  async find(idOrUsername: string): Promise<InfluencerEntry | undefined> {
    const entries = await this.entries();
    const lower = idOrUsername.toLowerCase();
    return (
      entries.find((e) => e.id === idOrUsername) ??
      entries.find((e) => e.username.toLowerCase() === lower)
    );
  }

  /** The username closest to `name` (within a small edit distance), for "did you mean". */
  async closestUsername(name: string): Promise<string | undefined> {
    return closest(
      name,
      (await this.entries()).map((e) => e.username),
    );
  }
}
