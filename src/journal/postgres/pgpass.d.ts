/** node-postgres's own `.pgpass` reader (libpq's format and rules), which ships no types. */
declare module 'pgpass' {
  /** The connection's host, port, database and user, as node-postgres resolved them. */
  export interface PgpassConnection {
    readonly host?: string | null;
    readonly port?: number | string | null;
    readonly database?: string | null;
    readonly user?: string | null;
  }
  /** Calls back with the password of the first matching line, or undefined (no file, no match, a file others may read). */
  function pgpass(
    connection: PgpassConnection,
    found: (password: string | undefined) => void,
  ): void;
  export default pgpass;
}
