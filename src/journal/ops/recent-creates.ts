import type { JournalDb } from '../sql.js';

export interface RecentCreate {
  /** When the attempt's intent was committed (just before its create was sent). */
  readonly at: number;
  /** The item's kind: `image`, `video` or `training`. */
  readonly kind: string;
}

/**
 * Creates attempted since `since` (ms epoch), in every run of this journal.
 * A runner restarted after a kill seeds its rate gate with them: the service
 * still counts what the killed process sent.
 */
export function recentCreates(j: JournalDb, since: number): RecentCreate[] {
  return j
    .stmt(
      `SELECT a.created_at AS at, i.kind AS kind FROM attempts a
       JOIN items i ON i.run_id = a.run_id AND i.item_key = a.item_key
       WHERE a.created_at >= ? ORDER BY a.created_at`,
    )
    .all(since) as RecentCreate[];
}
