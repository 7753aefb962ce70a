import { redact, redactDeep } from '../../shared/index.js';
import { type EventRecord, eventRecordSchema } from '../records.js';
import type { JournalDb } from '../sql.js';
import { EVENT_COLUMNS } from './columns.js';

export interface NewEvent {
  /** Short machine type, e.g. `run.started`, `rate.paused`, `item.failed`. */
  readonly type: string;
  readonly message: string;
  readonly itemKey?: string | null;
  readonly data?: Record<string, unknown>;
  /** @default now */
  readonly at?: number;
}

/** Appends one entry to a run's timeline (status, report). Returns its id. */
export function appendEvent(j: JournalDb, runId: string, event: NewEvent): number {
  const result = j
    .stmt(
      `INSERT INTO events (run_id, at, type, item_key, message, data_json)
       VALUES (@runId, @at, @type, @itemKey, @message, @data)`,
    )
    .run({
      runId,
      at: event.at ?? j.now(),
      type: event.type,
      itemKey: event.itemKey ?? null,
      // Messages and data can quote the service: redacted again, a last line of defence.
      message: redact(event.message),
      data: JSON.stringify(redactDeep(event.data ?? {})),
    });
  return Number(result.lastInsertRowid);
}

export interface EventQuery {
  /** Only events with an id greater than this (to follow a timeline). */
  readonly afterId?: number;
  /** @default 1000 */
  readonly limit?: number;
}

/** A run's timeline, oldest first. */
export function listEvents(j: JournalDb, runId: string, query: EventQuery = {}): EventRecord[] {
  return j
    .stmt(`SELECT ${EVENT_COLUMNS} FROM events WHERE run_id = ? AND id > ? ORDER BY id LIMIT ?`)
    .all(runId, query.afterId ?? 0, query.limit ?? 1000)
    .map((row) => eventRecordSchema.parse(row));
}
