/**
 * Canonical JSON, content hashes and account fingerprints have one home
 * (src/shared/content-hash.ts). Journals store their values, so the digests
 * below were computed by release 0c8bfc1 (`contentHash(canonicalJson(x))` of
 * src/journal/keys.ts, `itemKey`/`keyBasis` of src/job/keys.ts) and must
 * never change.
 */
import { describe, expect, it } from 'vitest';
import { itemKey, keyBasis } from '../../src/job/keys.js';
import { accountFingerprint, canonicalJson, contentHash } from '../../src/shared/index.js';

const PINNED: [unknown, string][] = [
  [
    { input: { prompt: 'a quiet street, scene s1', style: 'photo', steps: 20 } },
    'ca96e6dac61d596442106ae0969de39434930d0329234c64bbd42fa93e18e91b',
  ],
  [
    { b: 1, a: { d: [2, null, 'é "q"'], c: true }, z: undefined, n: -0.5 },
    '17c732d044fecc59099c5ccdc8935e32f7c986977bc530d3a96546d9c2ffcc6b',
  ],
  [
    [1, 'two', { y: 2, x: 1 }, []],
    'dde2d8e7f8422da621e9f7477feecd38d36bbb6d7595ab6df2c780266507062a',
  ],
  ['plain text', '0b12c1b2532c35af35bd0c9a8376e5357e9cc3f9430e5cc2fdac6ebddc7c03cf'],
  [
    { name: 'Mia', username: 'mia', style: 'photo', gender: 'female', images: ['ab12', 'cd34'] },
    '88c8abe952fface35afaf219e4418118405b64ca09edb5c25adb5461c742adab',
  ],
];

describe('contentHash', () => {
  it.each(PINNED)('hashes %j as release 0c8bfc1 did', (value, digest) => {
    expect(contentHash(value)).toBe(digest);
  });

  it('ignores key order', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: [3] } })).toBe('{"a":{"c":[3],"d":2},"b":1}');
    expect(contentHash({ a: 1, b: 2 })).toBe(contentHash({ b: 2, a: 1 }));
  });

  it('does not depend on key order or undefined properties', () => {
    expect(contentHash({ a: 1, b: [1, { d: 2, c: 3 }] })).toBe(
      contentHash({ b: [1, { c: 3, d: 2 }], c: undefined, a: 1 }),
    );
    expect(contentHash({ a: 1 })).not.toBe(contentHash({ a: 2 }));
  });
});

describe('canonicalJson', () => {
  it('sorts keys by code unit, integer-like keys included', () => {
    expect(canonicalJson({ b: 1, 10: 'x', 2: 'y', a: { d: 2, c: [3] } })).toBe(
      '{"10":"x","2":"y","a":{"c":[3],"d":2},"b":1}',
    );
  });

  it('writes undefined and non-finite values as JSON does in arrays', () => {
    expect(canonicalJson([undefined, Number.NaN, 'a'])).toBe('[null,null,"a"]');
    expect(canonicalJson(undefined)).toBe('null');
  });
});

describe('item keys', () => {
  it('are what release 0c8bfc1 computed', () => {
    const vars = { scene: 's1', Z: 'x' };
    expect(itemKey(keyBasis('shots', vars, 0), vars, 1)).toBe('x-s1-c8023cd934');
    expect(itemKey(keyBasis('shots', { scene: 's1' }, 2), { scene: 's1' }, 3)).toBe(
      's1-cf96b3f01a',
    );
  });
});

describe('accountFingerprint', () => {
  it('is the first 16 hex characters of the key sha256 (what journals store in scopes)', () => {
    expect(accountFingerprint('ifk_live_ef0ec6e5cba4ec1c7429e84785fc0274')).toBe(
      '72ace15bf005a78a',
    );
  });
});
