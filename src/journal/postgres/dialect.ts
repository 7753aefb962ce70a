/**
 * The ops' SQL (SQLite's) as PostgreSQL statements with the same meaning.
 * The ops are written in a subset both engines share; what differs is
 * rewritten here, once per statement text (the store caches the result):
 *
 * - parameters: `?` and `@name` become `$1...` (one number per name);
 * - `rowid` (the insertion order the ops sort by) is the `seq` column every
 *   PostgreSQL table of the journal has for it (schema.ts);
 * - `a IS b` between two columns is `IS NOT DISTINCT FROM` (null-safe);
 * - SQLite's unary `+column` (a planner hint) is dropped;
 * - a bare parameter as a condition (`CASE WHEN @keep THEN`, bound 0 or 1) is `<> 0`;
 * - `json_each(?)` over a JSON array is `json_array_elements_text`, and
 *   `x IN (SELECT value FROM json_each(?))` is `x = ANY(ARRAY(...))`;
 * - the scalar MAX(a, b) / MIN(a, b) are GREATEST / LEAST;
 * - `strftime('%Y-%m-%d', ms / 1000, 'unixepoch')` is the UTC day by `to_char`;
 * - camelCase aliases are quoted, or PostgreSQL folds them to lower case;
 * - an INSERT into `events` or `reviews` returns the new `id`.
 *
 * `json_extract`, `json_set`, `ib_service` and `ib_scope` keep their names:
 * the schema defines them as functions with SQLite's meaning (schema.ts).
 * Anything else an op writes must already mean the same on both engines;
 * the journal's tests run every op on both stores to hold that.
 */

export interface PostgresStatement {
  readonly text: string;
  /** Parameter names in `$n` order (named statements), or undefined for positional ones. */
  readonly names: readonly string[] | undefined;
  /** Whether the statement returns the inserted row's `id` (for `lastInsertRowid`). */
  readonly returnsId: boolean;
}

const LITERAL = /('(?:[^']|'')*')/;

/** Applies `rewrite` to the parts of `sql` outside string literals. */
function outsideLiterals(sql: string, rewrite: (code: string) => string): string {
  return sql
    .split(LITERAL)
    .map((part, i) => (i % 2 === 1 ? part : rewrite(part)))
    .join('');
}

/**
 * SQLite's two-argument MAX(a, b) / MIN(a, b) are PostgreSQL's GREATEST /
 * LEAST (which skip a NULL where SQLite returns NULL: the ops only compare
 * NOT NULL columns with values).
 */
function scalarMinMax(sql: string): string {
  let out = '';
  let from = 0;
  for (const m of sql.matchAll(/\b(MAX|MIN)\(/gi)) {
    const start = (m.index ?? 0) + m[0].length;
    let depth = 1;
    let comma = false;
    for (let i = start; i < sql.length && depth > 0; i++) {
      const c = sql[i];
      if (c === '(') depth += 1;
      else if (c === ')') depth -= 1;
      else if (c === ',' && depth === 1) comma = true;
    }
    if (!comma) continue;
    out += sql.slice(from, m.index) + (m[1]?.toUpperCase() === 'MAX' ? 'GREATEST(' : 'LEAST(');
    from = start;
  }
  return out + sql.slice(from);
}

export function toPostgres(sql: string): PostgresStatement {
  let text = scalarMinMax(sql).replace(
    /strftime\('%Y-%m-%d', ([^,]+), 'unixepoch'\)/g,
    "to_char(to_timestamp(($1)::double precision) AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
  );
  const names: string[] = [];
  let positional = 0;
  text = outsideLiterals(text, (code) =>
    code
      // A list as a JSON array (`item_key IN (SELECT value FROM json_each(?))`,
      // a page's keys) is an array: one index scan takes all its values, in
      // key order, where the subquery's join went down the index once per value.
      .replace(
        /\b(NOT\s+)?IN\s*\(\s*SELECT\s+value\s+FROM\s+json_each\(([^()]*)\)\s*\)/g,
        (_match, not: string | undefined, list: string) =>
          `${not ? '<> ALL' : '= ANY'}(ARRAY(SELECT json_array_elements_text(CAST(${list} AS json))))`,
      )
      .replace(/json_each\(([^()]*)\)/g, 'json_array_elements_text(CAST($1 AS json))')
      .replace(/\browid\b/g, 'seq')
      // SQLite's unary plus on a column (a planner hint) means nothing here.
      .replace(/(\b(?:WHERE|AND|OR|ON)\s+)\+(?=[A-Za-z_])/g, '$1')
      // A bare parameter as a condition is SQLite's 0 or 1.
      .replace(/\bWHEN\s+(@[A-Za-z_]\w*|\?)\s+THEN\b/g, 'WHEN $1 <> 0 THEN')
      .replace(/\bIS\s+(?!NULL\b|NOT\b)([A-Za-z_]\w*\.[A-Za-z_]\w*)/g, 'IS NOT DISTINCT FROM $1')
      .replace(/@([A-Za-z_]\w*)|\?/g, (_match, name: string | undefined) => {
        if (name === undefined) return `$${++positional}`;
        let index = names.indexOf(name);
        if (index < 0) index = names.push(name) - 1;
        return `$${index + 1}`;
      }),
  );
  if (positional > 0 && names.length > 0) {
    throw new Error(`A journal statement mixes ? and @name parameters: ${sql}`);
  }
  const aliases = new Set<string>();
  outsideLiterals(text, (code) => {
    for (const m of code.matchAll(/\bAS\s+([a-z]\w*[A-Z]\w*)/g)) aliases.add(m[1] as string);
    return code;
  });
  if (aliases.size > 0) {
    const alias = new RegExp(`(?<!["\\w])(${[...aliases].join('|')})(?![\\w"])`, 'g');
    text = outsideLiterals(text, (code) => code.replace(alias, '"$1"'));
  }
  const returnsId =
    /^\s*INSERT\s+INTO\s+(events|reviews)\b/i.test(text) && !/\bRETURNING\b/i.test(text);
  if (returnsId) text = `${text} RETURNING id`;
  return { text, names: names.length > 0 ? names : undefined, returnsId };
}

/** The values of a statement's parameters, in `$n` order, from better-sqlite3-style arguments. */
export function bindValues(statement: PostgresStatement, args: readonly unknown[]): unknown[] {
  if (statement.names) {
    const named = (args[0] ?? {}) as Record<string, unknown>;
    return statement.names.map((name) => toPostgresValue(named[name]));
  }
  return args.flat().map(toPostgresValue);
}

function toPostgresValue(value: unknown): unknown {
  return value === undefined ? null : value;
}

/**
 * The type a value is bound as. SQLite types values, PostgreSQL infers a
 * parameter's type from where it stands, and cannot where a statement says
 * only `? IS NULL`, or infers two types for one name used twice; so each
 * parameter is cast to its value's type (a null is left to inference).
 */
function typeOf(value: unknown): string | undefined {
  if (typeof value === 'string') return 'text';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number' || typeof value === 'bigint') {
    const n = Number(value);
    if (!Number.isInteger(n)) return 'double precision';
    return Math.abs(n) < 2 ** 31 ? 'integer' : 'bigint';
  }
  return undefined;
}

/**
 * The statement for these values: each `$n` cast to its value's type, and a
 * null written as NULL (typed by where it stands, as SQLite's is) with the
 * parameters after it renumbered.
 */
export function typedStatement(
  statement: PostgresStatement,
  values: readonly unknown[],
): { readonly text: string; readonly keep: readonly number[] } {
  const keep: number[] = [];
  const renumbered = new Map<number, number>();
  values.forEach((value, i) => {
    if (value === null) return;
    keep.push(i);
    renumbered.set(i, keep.length);
  });
  const text = outsideLiterals(statement.text, (code) =>
    code.replace(/\$(\d+)\b/g, (_match, n: string) => {
      const i = Number(n) - 1;
      const to = renumbered.get(i);
      if (to === undefined) return 'NULL';
      const type = typeOf(values[i]);
      return type ? `$${to}::${type}` : `$${to}`;
    }),
  );
  return { text, keep };
}

/** A key of the statement `typedStatement` makes for these values (one per key). */
export const typeSignature = (values: readonly unknown[]): string =>
  values.map((v) => (v === null ? 'null' : (typeOf(v) ?? '-'))).join(',');
