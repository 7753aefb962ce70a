/**
 * A small RFC 4180 reader for the tests, independent of src/ (so a test of
 * `manifest.csv` does not read it with the code that wrote it): quoted fields
 * with doubled quotes and line breaks, CRLF or LF records, a leading UTF-8
 * BOM reported rather than kept.
 */
export interface ParsedCsv {
  readonly bom: boolean;
  readonly header: string[];
  readonly records: string[][];
  /** The cell of `record` under the header `name` (undefined when there is no such column). */
  cell(record: readonly string[], name: string): string | undefined;
}

export function parseCsv(text: string): ParsedCsv {
  const bom = text.startsWith('\uFEFF');
  const body = bom ? text.slice(1) : text;
  const rows: string[][] = [];
  let field = '';
  let row: string[] = [];
  let quoted = false;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (quoted) {
      if (ch === '"' && body[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && body[i + 1] === '\n') i++;
      rows.push([...row, field]);
      row = [];
      field = '';
    } else field += ch;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  const [header = [], ...records] = rows;
  return {
    bom,
    header,
    records,
    cell: (record, name) => {
      const index = header.indexOf(name);
      return index < 0 ? undefined : record[index];
    },
  };
}
