import { type DeliveryRecord, type DeliveryState, deliveryRecordSchema } from '../records.js';
import type { JournalDb } from '../sql.js';

/** Where an object goes: the store (endpoint origin or 'aws'), its bucket and key. */
export interface DeliveryTarget {
  readonly store: string;
  readonly bucket: string;
  readonly key: string;
}

export interface DeliveryUpdate extends DeliveryTarget {
  readonly sha256: string;
  readonly bytes: number;
  readonly state: DeliveryState;
  readonly jobName: string;
}

/** The journal's last word on one object, or undefined when it never sent it. */
export function getDelivery(j: JournalDb, target: DeliveryTarget): DeliveryRecord | undefined {
  const row = j
    .stmt(
      `SELECT store, bucket, key, sha256, bytes, state, job_name AS jobName, at FROM deliveries
       WHERE store = @store AND bucket = @bucket AND key = @key`,
    )
    .get(target);
  return row === undefined ? undefined : deliveryRecordSchema.parse(row);
}

/** Records an object's state (committed at once: `sending` must be durable before the send). */
export function recordDelivery(j: JournalDb, update: DeliveryUpdate): void {
  j.stmt(
    `INSERT INTO deliveries (store, bucket, key, sha256, bytes, state, job_name, at)
     VALUES (@store, @bucket, @key, @sha256, @bytes, @state, @jobName, @at)
     ON CONFLICT (store, bucket, key) DO UPDATE SET
       sha256 = excluded.sha256, bytes = excluded.bytes, state = excluded.state,
       job_name = excluded.job_name, at = excluded.at`,
  ).run({ ...update, at: j.now() });
}
