/**
 * Migration 6: deliveries. One row per object a delivery sends to
 * a store: `store` is the endpoint (the origin of AWS_ENDPOINT_URL_S3 /
 * AWS_ENDPOINT_URL, or 'aws'), so one bucket name on two stores stays two
 * destinations. Written `sending` before the object goes out and `delivered`
 * once the store has it, like an attempt's intent and outcome: after a kill,
 * a `sending` row is checked against the store (HEAD, sha256 metadata)
 * before anything is sent again.
 */
export const migration0006 = {
  version: 6,
  name: 'deliveries',
  sql: `
CREATE TABLE deliveries (
  store TEXT NOT NULL,
  bucket TEXT NOT NULL,
  key TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('sending', 'delivered')),
  job_name TEXT NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (store, bucket, key)
) STRICT;
`,
} as const;
