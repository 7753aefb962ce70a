/**
 * CSV injection guard: every spelling a spreadsheet runs as a
 * formula gets the leading `'`, plain text and numbers are left alone.
 */
import { describe, expect, it } from 'vitest';
import { csvCell } from '../../src/outputs/csv.js';

describe('csvCell', () => {
  it.each([
    '=1+1',
    '+1',
    '-1',
    '@SUM(A1)',
    '\t=1',
    ' =HYPERLINK("x")',
    '\u00a0=1',
    '\u3000=1',
    '＝1+1',
    ' ＋1',
    '－1',
    '＠SUM(A1)',
  ])('neutralises %j', (text) => {
    expect(csvCell(text).replace(/^"/, '')).toMatch(/^'/);
  });

  it.each(['a = b', 'café', 'x-1', '1e5'])('leaves %j as it is', (text) => {
    expect(csvCell(text)).toBe(text);
  });

  it('leaves numbers alone, negative ones included', () => {
    expect(csvCell(-3)).toBe('-3');
  });
});
