/** The one redaction (src/shared/redact.ts): which forms of a secret it removes. */
import { describe, expect, it } from 'vitest';
import {
  printable,
  printableLines,
  quote,
  REDACTED,
  redact,
  redactDeep,
  registerSecret,
} from '../../src/shared/index.js';

const KEY = `ifk_live_${'a1'.repeat(16)}`;
const HEX = KEY.slice('ifk_live_'.length);
registerSecret(KEY);

describe('redact', () => {
  it('removes the key verbatim, URL-encoded, base64, base64url and its secret part', () => {
    const odd = 'sk-test/with+odd=chars&more_0123456789abcdef';
    registerSecret(odd);
    for (const form of [
      KEY,
      HEX,
      Buffer.from(KEY).toString('base64'),
      Buffer.from(odd).toString('base64url'),
      encodeURIComponent(odd),
      odd,
    ]) {
      expect(redact(`before ${form} after`)).toBe(`before ${REDACTED} after`);
    }
  });

  it('replaces the whole key rather than leaving its prefix (longest form first)', () => {
    expect(redact(`key=${KEY};`)).toBe(`key=${REDACTED};`);
  });

  it('masks bearer credentials it was not told about, and leaves other text alone', () => {
    expect(redact('Authorization: Bearer abc.def')).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(redact('a short _part and ordinary words')).toBe('a short _part and ordinary words');
  });

  it('ignores empty and very short secrets', () => {
    registerSecret('');
    registerSecret('abc');
    registerSecret(undefined);
    expect(redact('abc and more')).toBe('abc and more');
  });
});

describe('redactDeep', () => {
  it('redacts every string in JSON-like values and keeps their shape', () => {
    const value = {
      message: `bad key ${KEY}`,
      details: [{ url: `https://x.test/?key=${KEY}`, n: 1, ok: true, none: null }],
    };
    expect(redactDeep(value)).toEqual({
      message: `bad key ${REDACTED}`,
      details: [{ url: `https://x.test/?key=${REDACTED}`, n: 1, ok: true, none: null }],
    });
    expect(redactDeep(null)).toBeNull();
    expect(redactDeep(undefined)).toBeUndefined();
    expect(redactDeep(`${HEX}`)).toBe(REDACTED);
  });
});

describe('printable', () => {
  it('escapes the control characters a terminal would obey, and redacts', () => {
    expect(printable('evil \x1b]0;pwned\x07\x1b[2J mug')).toBe(
      'evil \\x1b]0;pwned\\x07\\x1b[2J mug',
    );
    expect(printable('a\nb\rc\td\x7f\x9b')).toBe('a\\nb\\rc\\td\\x7f\\x9b');
    expect(printable('abc\u202edef\u2028')).toBe('abc\\u202edef\\u2028');
    expect(printable(`key ${KEY}`)).toBe(`key ${REDACTED}`);
    expect(printable('Tasse café … 日本')).toBe('Tasse café … 日本');
  });

  it('printableLines keeps the line breaks of a text of several lines', () => {
    expect(printableLines('one \x1b[2J\ntwo')).toBe('one \\x1b[2J\ntwo');
  });
});

describe('redact: credentials it was not told about', () => {
  it('masks a key-shaped token of another account, and leaves ordinary snake_case alone', () => {
    const other = `ifk_live_${'9f'.repeat(16)}`;
    expect(redact(`IBATCH_API_KEY=${other}`)).toBe(`IBATCH_API_KEY=${REDACTED}`);
    expect(redact('shots/run_test_case_portrait.png')).toBe('shots/run_test_case_portrait.png');
  });

  it('masks the user and password of a URL of any scheme, keeping the host', () => {
    expect(redact('got http://user:pw@h.example/x')).toBe(`got http://${REDACTED}@h.example/x`);
    expect(redact('s3://AKIAABCDEFGHIJKLMNOP:s3cr3t@bucket/p')).toBe(`s3://${REDACTED}@bucket/p`);
    expect(redact('https://h.example/a@b')).toBe('https://h.example/a@b');
  });
});

describe('quote', () => {
  it('redacts before it cuts, so no part of a long key survives the cut', () => {
    const long = `ifk_live_${'ab12'.repeat(30)}`;
    const quoted = quote(`KEY=${long}`, 20);
    expect(quoted).not.toContain('ab12ab12');
    expect(quoted).toBe(`"KEY=${REDACTED}"`);
  });

  it('cuts a long value and escapes control characters and line breaks', () => {
    expect(quote('x'.repeat(100))).toBe(`"${'x'.repeat(57)}"...`);
    expect(quote('a\u001b]0;t\u0007\nb')).toBe('"a\\u001b]0;t\\u0007\\nb"');
  });
});
