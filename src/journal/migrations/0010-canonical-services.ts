/**
 * Migration 10: every stored service base URL and scope in its canonical
 * spelling (src/shared/service-url.ts, through the `ib_service` and
 * `ib_scope` SQL functions every connection registers, sql.ts), so a lookup
 * by the canonical scope finds the rows an older ibatch wrote under another
 * spelling (`http://127.0.0.1:8080/...` and `http://localhost:8080/...`).
 * Where two spellings hold one record (an asset uploaded, or an influencer
 * trained, under both), the row already canonical is kept (`OR IGNORE`) and
 * the other stays as it was; reads compare canonical spellings anyway, so a
 * read-only open of a version-9 journal reads it as it is.
 */
export const migration0010 = {
  version: 10,
  name: 'canonical-services',
  readsUnchanged: true,
  sql: `
UPDATE runs SET options_json = json_set(options_json,
    '$.service', ib_service(json_extract(options_json, '$.service')))
  WHERE json_type(options_json, '$.service') = 'text'
    AND json_extract(options_json, '$.service') <> ib_service(json_extract(options_json, '$.service'));
UPDATE runs SET options_json = json_set(options_json,
    '$.scope', ib_scope(json_extract(options_json, '$.scope')))
  WHERE json_type(options_json, '$.scope') = 'text'
    AND json_extract(options_json, '$.scope') <> ib_scope(json_extract(options_json, '$.scope'));
UPDATE OR IGNORE assets SET scope = ib_scope(scope) WHERE scope <> ib_scope(scope);
UPDATE OR IGNORE influencers SET scope = ib_scope(scope) WHERE scope <> ib_scope(scope);
`,
} as const;
