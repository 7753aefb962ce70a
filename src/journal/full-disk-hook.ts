/**
 * Test-only: a full disk under the journal, on any machine and without root.
 * `IBATCH_JOURNAL_FULL_AFTER=N` gives a writer's journal room
 * for N more pages (4 KiB each) once opened and migrated, its free pages
 * counted (a fresh journal has some: migrations 9 and 15 drop indexes and
 * tables; more free pages than N are given back first by a VACUUM); the
 * write that needs one more page fails with SQLITE_FULL, the code SQLite returns
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
  const room = Number(spec);
  const freePages = () => Number(db.pragma('freelist_count', { simple: true }));
  if (freePages() > room) db.exec('VACUUM');
  const pages = Number(db.pragma('page_count', { simple: true }));
  db.pragma(`max_page_count = ${pages + Math.max(0, room - freePages())}`);
}
