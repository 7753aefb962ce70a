import { ATTEMPT_STATE } from '../records.js';
import type { JournalDb } from '../sql.js';
import { ATTEMPTS } from './columns.js';

export interface RecentCreate {
  /**
   * When the service had certainly received the create: its 202 time, or
   * null for an intent that never got an answer (it may have been sent at
   * any moment up to the process's end).
   */
  readonly sentBy: number | null;
  /** The item's kind: `image`, `video` or `training`. */
  readonly kind: string;
}

/** Intents older than this are from runs long gone: they no longer count. */
const STALE_INTENT_MS = 3_600_000;

/**
 * Creates the service may still count in a window reaching back to `since`
 * (ms epoch), in every run of this journal: answered ones since then, and
 * unanswered intents. A runner restarted after a kill seeds its rate gate
 * with them: the service still counts what the killed process sent.
 */
export function recentCreates(j: JournalDb, since: number): RecentCreate[] {
  return j
    .stmt(
      `SELECT a.submitted_at AS sentBy, i.kind AS kind FROM ${ATTEMPTS}
       WHERE a.submitted_at >= @since
          OR (a.state = '${ATTEMPT_STATE.intent}' AND a.created_at >= @staleBefore)
       ORDER BY a.created_at`,
    )
    .all({ since, staleBefore: since - STALE_INTENT_MS }) as RecentCreate[];
}
