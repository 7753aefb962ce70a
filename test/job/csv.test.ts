import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CsvSyntaxError, formatCsv, parseCsv } from '../../src/job/index.js';

describe('CSV (RFC 4180)', () => {
  it('reads quoted fields, doubled quotes, CRLF, embedded newlines and a BOM', () => {
    const text = '\uFEFFsku,name\r\nmug,"Mug, ""black"""\r\nbag,"two\r\nlines"\r\n';
    const table = parseCsv(text);
    expect(table.header).toEqual(['sku', 'name']);
    expect(table.records.map((r) => r.fields)).toEqual([
      ['mug', 'Mug, "black"'],
      ['bag', 'two\r\nlines'],
    ]);
    expect(table.records.map((r) => r.line)).toEqual([2, 3]);
  });

  it('accepts LF line ends, a missing final newline and skips blank lines', () => {
    expect(parseCsv('a,b\n1,2\n\n3,4').records.map((r) => r.fields)).toEqual([
      ['1', '2'],
      ['3', '4'],
    ]);
  });

  it.each([
    // At the quote that opened the field, not at the end of the file.
    ['a,b\n1,"2\n3,4\n', /^line 2, column 3: unterminated quoted field/],
    ['a,b\n1,x"y\n', /quote inside an unquoted field/],
    ['a,b\n1,"2"x\n', /after a closing quote/],
    ['a,b\n1\n', /expected 2 fields/],
    ['a,a\n1,2\n', /appears twice/],
    ['', /header/],
  ])('rejects %j', (text, message) => {
    expect(() => parseCsv(text)).toThrow(CsvSyntaxError);
    expect(() => parseCsv(text)).toThrow(message);
  });

  it('round-trips arbitrary tables', () => {
    const field = fc.string({ unit: fc.constantFrom('a', 'b', ',', '"', '\r', '\n', ' ', 'é') });
    const table = fc
      .integer({ min: 1, max: 4 })
      .chain((width) =>
        fc.tuple(
          fc.uniqueArray(fc.stringMatching(/^[a-z]{1,5}$/), { minLength: width, maxLength: width }),
          fc.array(fc.array(field, { minLength: width, maxLength: width }), { maxLength: 8 }),
        ),
      );
    fc.assert(
      fc.property(table, ([header, rows]) => {
        const parsed = parseCsv(formatCsv([header, ...rows]));
        expect(parsed.header).toEqual(header);
        expect(parsed.records.map((r) => r.fields)).toEqual(rows);
      }),
    );
  });
});
