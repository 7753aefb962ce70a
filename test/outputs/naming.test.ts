import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_OUTPUT_TEMPLATE,
  fixedFolderOf,
  MAX_SEGMENT_BYTES,
  OutputTemplateError,
  PathEscapeError,
  planOutputFile,
  renderOutputPath,
  resolveInside,
  sanitizeSegment,
} from '../../src/outputs/index.js';
import { tempDir } from '../helpers/index.js';

const HOSTILE = [
  '../',
  '..',
  '../../etc/passwd',
  '/etc/passwd',
  'C:\\Windows\\system32',
  'C:evil',
  '\\\\server\\share',
  'a\0b',
  '%2e%2e/%2e%2e/x',
  '..%2f..%2f',
  '．．／．．／x', // fullwidth dots and solidus
  '‥/x', // two-dot leader (NFKC -> "..")
  'a\u2215b', // division slash
  'evil\u202egnp.exe', // right-to-left override
  'CON',
  'nul.txt',
  'com¹',
  '.hidden',
  ' . ',
  '',
  'x'.repeat(5000),
  '🙂'.repeat(300),
];

const isSafeSegment = (s: string): boolean =>
  s.length > 0 &&
  s !== '.' &&
  s !== '..' &&
  !s.startsWith('.') &&
  !/[/\\:<>"|?*%#\0]/.test(s) &&
  !/[\p{Cc}\p{Cf}]/u.test(s) &&
  Buffer.byteLength(s, 'utf8') <= MAX_SEGMENT_BYTES &&
  !/^(con|prn|aux|nul|com.|lpt.)(\..*)?$/i.test(s);

describe('sanitizeSegment', () => {
  it.each(HOSTILE)('makes %j one safe segment', (value) => {
    expect(isSafeSegment(sanitizeSegment(value))).toBe(true);
  });

  it('keeps ordinary names and keeps long names distinct', () => {
    expect(sanitizeSegment('beach-01_final')).toBe('beach-01_final');
    expect(sanitizeSegment('Ava on the beach')).toBe('Ava on the beach');
    const a = sanitizeSegment(`${'x'.repeat(300)}a.png`);
    const b = sanitizeSegment(`${'x'.repeat(300)}b.png`);
    expect(a).not.toBe(b);
    expect(a.endsWith('.png')).toBe(true);
  });

  it('is idempotent and always safe (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (value) => {
        const once = sanitizeSegment(value);
        expect(isSafeSegment(once)).toBe(true);
        expect(sanitizeSegment(once)).toBe(once);
      }),
      { numRuns: 500 },
    );
  });
});

describe('renderOutputPath', () => {
  it('renders the default template with the readable name (the item key without one)', () => {
    const values = { step: 'portraits', item: 'beach-f2d322752e', n: 2, ext: 'png' };
    expect(renderOutputPath(DEFAULT_OUTPUT_TEMPLATE, values)).toBe(
      'portraits/beach-f2d322752e-2.png',
    );
    expect(renderOutputPath(DEFAULT_OUTPUT_TEMPLATE, { ...values, name: 'Beach' })).toBe(
      'portraits/beach-2.png',
    );
  });

  it('{name} keeps letters of any script and accents (NFC), one dash for the rest', () => {
    const render = (name: string) => renderOutputPath('{name}', { name });
    expect(render('Bonjour Paris à Paris café silk scarf')).toBe(
      'bonjour-paris-à-paris-café-silk-scarf',
    );
    // Decomposed input (macOS file names, some CSV exports) comes out composed.
    expect(render('cafe\u0301')).toBe('café');
    expect(render('東京 / Ночь: 2024?')).toBe('東京-ночь-2024');
    expect(render('../../etc/passwd')).toBe('etc-passwd');
    expect(render('CON')).toBe('_con');
    expect(render('***')).toBe('_');
    // A template variable called `name` wins, as for the other non-fixed fields.
    expect(renderOutputPath('{name}', { name: 'Beach', vars: { name: 'Ava Stone' } })).toBe(
      'Ava Stone',
    );
  });

  it('supports every placeholder, template variables included', () => {
    const out = renderOutputPath('{kind}/{model}/{label}-{scene}-{generationId}.{ext}', {
      kind: 'image',
      model: 'flux-pro',
      label: 'Flux Pro',
      generationId: 'abc',
      ext: 'jpg',
      vars: { scene: 'beach' },
    });
    expect(out).toBe('image/flux-pro/Flux Pro-beach-abc.jpg');
  });

  it('refuses unknown placeholders and unmatched braces', () => {
    expect(() => renderOutputPath('{stp}/{item}', {})).toThrow(OutputTemplateError);
    expect(() => renderOutputPath('{step}/{item', {})).toThrow(OutputTemplateError);
  });

  it('neutralises hostile template literals and missing values', () => {
    expect(renderOutputPath('../../{step}/./x', { step: 's' })).toBe('_/_/s/_/x');
    expect(renderOutputPath('/abs/{item}', {})).toBe('abs/_');
  });

  it('never leaves the output folder, whatever the values (property)', () => {
    const root = tempDir('naming');
    const hostile = fc.oneof(
      fc.constantFrom(...HOSTILE),
      fc.string({ unit: 'binary', maxLength: 300 }),
    );
    const template = fc.constantFrom(
      DEFAULT_OUTPUT_TEMPLATE,
      '{model}/{label}/{generationId}.{ext}',
      '{a}/{b}-{n}.{ext}',
      '../{kind}/../{item}',
    );
    fc.assert(
      fc.property(template, hostile, hostile, hostile, hostile, (t, a, b, c, d) => {
        const values = {
          step: a,
          item: b,
          model: c,
          label: d,
          name: a,
          generationId: a,
          kind: b,
          n: c,
          ext: d,
          vars: { a, b },
        };
        const { relative, absolute } = planOutputFile(root, t, values);
        expect(relative.split('/').every(isSafeSegment)).toBe(true);
        expect(absolute.startsWith(root + path.sep)).toBe(true);
      }),
      { numRuns: 400 },
    );
  });
});

describe('fixedFolderOf', () => {
  it("is the template's leading folders that name nothing but {step}", () => {
    expect(fixedFolderOf(DEFAULT_OUTPUT_TEMPLATE, 'shots')).toBe('shots');
    expect(fixedFolderOf('media/{ step }/raw/{item}-{n}.{ext}', 'shots')).toBe('media/shots/raw');
    expect(fixedFolderOf('{step}/{product}/{n}.{ext}', 'shots')).toBe('shots');
    expect(fixedFolderOf('{product}/{step}/{n}.{ext}', 'shots')).toBe('');
    expect(fixedFolderOf('{step}-{n}.{ext}', 'shots')).toBe('');
    expect(fixedFolderOf('../../{step}/{n}.{ext}', 'shots')).not.toContain('..');
    expect(fixedFolderOf('{step/{n}.{ext}', 'shots')).toBe('');
  });
});

describe('resolveInside', () => {
  it('accepts plain relative paths and rejects escapes', () => {
    const root = tempDir('naming');
    expect(resolveInside(root, 'a/b.png')).toBe(path.join(root, 'a', 'b.png'));
    for (const bad of [
      '../x',
      'a/../../x',
      '/etc/passwd',
      'C:\\x',
      'c:x',
      '\\\\srv\\s',
      '.',
      '',
      'a\0b',
    ]) {
      expect(() => resolveInside(root, bad), bad).toThrow(PathEscapeError);
    }
  });

  it('rejects a path through a symlinked folder that leads outside', () => {
    const root = tempDir('naming');
    const outside = tempDir('naming');
    symlinkSync(outside, path.join(root, 'link'));
    expect(() => resolveInside(root, 'link/x.png')).toThrow(/link outside/);
    expect(() => resolveInside(root, 'link/deeper/x.png')).toThrow(PathEscapeError);
    mkdirSync(path.join(root, 'real'));
    expect(resolveInside(root, 'real/deeper/x.png')).toBe(
      path.join(root, 'real', 'deeper', 'x.png'),
    );
  });

  it('rejects an existing symlink as the target', () => {
    const root = tempDir('naming');
    symlinkSync(path.join(root, 'elsewhere'), path.join(root, 'x.png'));
    expect(() => resolveInside(root, 'x.png')).toThrow(PathEscapeError);
  });
});
