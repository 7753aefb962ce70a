/**
 * Test-only: a full disk under the journal, on any machine and without root
 * (issue 13.8). `IBATCH_JOURNAL_FULL_AFTER=N` lets a writer's journal grow by
 * N pages (4 KiB each) beyond its size once opened and migrated; the write
 * that needs one more page fails with SQLITE_FULL, the code SQLite returns
 * when the disk is full (`PRAGMA max_page_count`). Unset (normal use), it is
 * one check at open and changes nothing. Like `IBATCH_CRASH_AT`
 * (scheduler/crash-points.ts), a malformed value is refused, so a typo never
 * silently tests nothing. See docs/faults.md, "Disk and journal failures".
 */
import type Database from 'better-sqlite3';
import { UsageError } from '../shared/index.js';

const FULL_DISK_HOOK = 'IBATCH_JOURNAL_FULL_AFTER';

export function applyFullDiskHook(db: Database.Database, env = process.env): void {
  const spec = env[FULL_DISK_HOOK];
  if (spec === undefined || spec === '') return;
  if (!/^\d{1,9}$/.test(spec)) {
    throw new UsageError(`Expected ${FULL_DISK_HOOK} to be a number of pages, got \`${spec}\``);
  }
  const pages = Number(db.pragma('page_count', { simple: true }));
  db.pragma(`max_page_count = ${pages + Number(spec)}`);
}
