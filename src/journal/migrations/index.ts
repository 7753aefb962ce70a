/**
 * Numbered, append-only schema migrations. They are TypeScript strings (not
 * .sql files) so `tsc` ships them in dist/ with no copy step.
 */
import { migration0001 } from './0001-initial.js';
import { migration0002 } from './0002-lookup-indexes.js';
import { migration0003 } from './0003-attempt-training-ids.js';
import { migration0004 } from './0004-item-vars.js';
import { migration0005 } from './0005-reviews.js';
import { migration0006 } from './0006-deliveries.js';
import { migration0007 } from './0007-run-tags.js';
import { migration0008 } from './0008-attempt-requests.js';
import { migration0009 } from './0009-drop-state-indexes.js';
import { migration0010 } from './0010-canonical-services.js';
import { migration0011 } from './0011-run-step-counts.js';
import { migration0012 } from './0012-items-in-order.js';
import { migration0013 } from './0013-step-counts-by-change.js';
import { migration0014 } from './0014-digest-key-indexes.js';
import { migration0015 } from './0015-item-rows.js';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  /**
   * Changes nothing a read relies on (it only drops indexes): a read-only
   * open (`status`, `plan`, `report`) accepts the version before it, so
   * upgrading ibatch does not lock the readers out of a journal until a
   * `run` migrates it.
   */
  readonly readsUnchanged?: true;
  /**
   * What a read-only open of the version before runs in its temporary schema
   * so reads find what this migration adds (derived from the rows there are):
   * such a journal is read as it is, too.
   */
  readonly readOnlyShim?: string;
}

export const MIGRATIONS: readonly Migration[] = [
  migration0001,
  migration0002,
  migration0003,
  migration0004,
  migration0005,
  migration0006,
  migration0007,
  migration0008,
  migration0009,
  migration0010,
  migration0011,
  migration0012,
  migration0013,
  migration0014,
  migration0015,
];
export const LATEST_SCHEMA_VERSION = MIGRATIONS.length;

/** The oldest version a read-only open accepts: the migrations after it change nothing reads rely on. */
export const OLDEST_READABLE_VERSION = MIGRATIONS.reduceRight(
  (oldest, m) =>
    (m.readsUnchanged || m.readOnlyShim) && m.version === oldest ? m.version - 1 : oldest,
  LATEST_SCHEMA_VERSION,
);
