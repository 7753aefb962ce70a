import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandJob, isJobFileError, type JobItem, loadJob } from '../../src/job/index.js';
import { expandMatrix } from '../../src/job/matrix.js';
import { tempDir } from '../helpers/index.js';
import { emulatorCatalog } from './helpers.js';

const models = emulatorCatalog();

function expand(yaml: string, files: Record<string, string | Buffer> = {}): JobItem[] {
  const dir = tempDir('job');
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  writeFileSync(join(dir, 'job.yaml'), yaml);
  return [...expandJob(loadJob(join(dir, 'job.yaml')), models).items];
}

const HEAD = 'version: 1\nname: t\ngenerations:\n';

describe('matrix', () => {
  it('follows the GitHub Actions include/exclude rules', () => {
    const combos = expandMatrix({
      fruit: ['apple', 'pear'],
      animal: ['cat', 'dog'],
      include: [
        { color: 'green' },
        { color: 'pink', animal: 'cat' },
        { fruit: 'apple', shape: 'circle' },
        { fruit: 'banana' },
        { fruit: 'banana', animal: 'cat' },
      ],
    });
    expect(combos).toEqual([
      { fruit: 'apple', animal: 'cat', color: 'pink', shape: 'circle' },
      { fruit: 'apple', animal: 'dog', color: 'green', shape: 'circle' },
      { fruit: 'pear', animal: 'cat', color: 'pink' },
      { fruit: 'pear', animal: 'dog', color: 'green' },
      { fruit: 'banana' },
      { fruit: 'banana', animal: 'cat' },
    ]);
  });

  it('exclude drops combinations matching every given key', () => {
    expect(expandMatrix({ a: [1, 2], b: ['x', 'y'], exclude: [{ a: 1, b: 'y' }] })).toEqual([
      { a: 1, b: 'x' },
      { a: 2, b: 'x' },
      { a: 2, b: 'y' },
    ]);
  });
});

describe('expansion', () => {
  it('renders templates, keeps typed whole-string values and applies defaults', () => {
    const items = expand(
      `${HEAD}  - id: v\n    model: seedance-fast\n    matrix: { secs: [3, 8] }\n    input: { prompt: "clip of {{ secs }}s", duration: "{{ secs }}" }\n`,
    );
    expect(items.map((i) => i.request.input)).toEqual([
      { prompt: 'clip of 3s', resolution: '480p', duration: 3 },
      { prompt: 'clip of 8s', resolution: '480p', duration: 8 },
    ]);
    expect(items.every((i) => i.expectedOutputs === 1 && i.kind === 'video')).toBe(true);
  });

  it('keeps existing keys when CSV rows are added, and disambiguates identical rows', () => {
    const job = `${HEAD}  - id: p\n    model: sdxl-lite\n    rows: rows.csv\n    count: 2\n    input: { prompt: "{{ thing }}" }\n`;
    const before = expand(job, { 'rows.csv': 'thing\ncat\ndog\n' });
    const after = expand(job, { 'rows.csv': 'thing\nbird\ncat\ndog\ncat\n' });
    const beforeKeys = before.map((i) => i.key);
    const afterKeys = new Set(after.map((i) => i.key));
    for (const key of beforeKeys) expect(afterKeys.has(key)).toBe(true);
    expect(afterKeys.size).toBe(after.length); // the duplicate "cat" row got its own keys
    expect(after).toHaveLength(8);
    expect(beforeKeys[0]).toMatch(/^cat-[0-9a-f]{10}$/);
  });

  it('keys rows by their `key:` columns: other values changed keep the key, and the key alone is hashed', () => {
    const job = `${HEAD}  - id: p\n    model: sdxl-lite\n    rows: rows.csv\n    key: sku\n    input: { prompt: "{{ sku }} {{ tagline }}" }\n`;
    const before = expand(job, { 'rows.csv': 'sku,tagline\nA1,old\nB2,same\n' });
    const after = expand(job, { 'rows.csv': 'sku,tagline\nB2,same\nA1,new\n' });
    expect(after.map((i) => i.key).sort()).toEqual(before.map((i) => i.key).sort());
    expect(before[0]?.key).toMatch(/^a1-[0-9a-f]{10}$/);
    expect(before.every((i) => i.keyed === true)).toBe(true);
    // Without `key:` a changed value is another item (keys of older journals unchanged).
    const plain = expand(job.replace('    key: sku\n', ''), {
      'rows.csv': 'sku,tagline\nA1,old\n',
    });
    expect(plain[0]?.key).not.toBe(before[0]?.key);
    expect(plain[0]?.keyed).toBeUndefined();
  });

  it('refuses a duplicate key (naming both lines) and a key column the rows lack', () => {
    const job = `${HEAD}  - id: p\n    model: sdxl-lite\n    rows: rows.csv\n    key: [sku]\n    input: { prompt: "{{ sku }}" }\n`;
    const messages = (files: Record<string, string>, yaml = job): string[] => {
      try {
        expand(yaml, files);
      } catch (error) {
        if (!isJobFileError(error)) throw error;
        return error.issues.map((i) => `${i.path} ${i.message}`);
      }
      return [];
    };
    expect(messages({ 'rows.csv': 'sku,t\nA1,x\nB2,y\nA1,z\n' })).toEqual([
      'generations[0].key duplicate key sku=A1: rows.csv:2 and rows.csv:4',
    ]);
    expect(messages({ 'rows.csv': 'code,t\nA1,x\n' })).toEqual([
      'generations[0].key key column `sku` is not a column of rows.csv (columns: code, t)',
    ]);
  });

  it('names items by their values in job order; a chain item after its source (keys unchanged)', () => {
    const items = expand(
      `${HEAD}  - id: img\n    model: flux-portrait\n    copies: 2\n    count: 2\n    matrix: { scene: [Café], mood: [calm] }\n    rows: rows.csv\n    input: { prompt: "{{ scene }} {{ product }}" }\n  - id: vid\n    model: kling-i2v\n    from: img\n    input: { prompt: "moving" }\n`,
      { 'rows.csv': 'product,brand\nsilk scarf,Zoé\n' },
    );
    const [first, second, ...chain] = items;
    // Matrix keys as written, then the rows' columns; the key keeps its sorted, ASCII slug.
    expect(first?.name).toBe('Café calm silk scarf Zoé 1');
    expect(second?.name).toBe('Café calm silk scarf Zoé 2');
    expect(first?.key).toMatch(/^zo-calm-silk-scarf-caf-[0-9a-f]{10}$/);
    expect(chain.map((i) => i.name)).toEqual([
      'Café calm silk scarf Zoé 1 from 1',
      'Café calm silk scarf Zoé 1 from 2',
      'Café calm silk scarf Zoé 2 from 1',
      'Café calm silk scarf Zoé 2 from 2',
    ]);
  });

  it('makes one chain item per image output of the source, keyed from it', () => {
    const items = expand(
      `${HEAD}  - id: img\n    model: flux-portrait\n    copies: 2\n    matrix: { scene: [beach] }\n    input: { prompt: "{{ scene }}" }\n  - id: vid\n    model: kling-i2v\n    from: img\n    input: { prompt: "moving {{ scene }}" }\n`,
    );
    const [source, ...chain] = items;
    expect(chain).toHaveLength(2);
    expect(chain.map((i) => i.key)).toEqual([`${source?.key}.o1`, `${source?.key}.o2`]);
    expect(chain[1]?.source).toEqual({ stepId: 'img', itemKey: source?.key, outputIndex: 1 });
    expect(chain[0]?.request.input.prompt).toBe('moving beach');
    expect(chain[0]?.request.generationId).toBeUndefined();
  });

  it('resolves local files and upload set entries in media fields', () => {
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const items = expand(
      `version: 1\nname: t\nuploads:\n  refs: { files: ["refs/*.png"] }\ngenerations:\n  - id: e\n    model: nano-edit\n    input: { prompt: x, image: ["./a.png", "upload:refs/b.png", "https://x.example/c.png"] }\n`,
      { 'a.png': png, 'refs/b.png': png },
    );
    const refs = items[0]?.mediaRefs ?? [];
    expect(refs).toHaveLength(2);
    expect(refs[0]).toMatchObject({ field: 'image', index: 0 });
    expect(typeof refs[0]?.path === 'string' && refs[0].path.endsWith('a.png')).toBe(true);
    expect(refs[1]).toMatchObject({ field: 'image', index: 1, path: { uploadSet: 'refs' } });
  });

  it('names the item when a templated value breaks the contract', () => {
    try {
      expand(
        `${HEAD}  - id: v\n    model: veo-lite-audio\n    matrix: { secs: [5, 45] }\n    input: { prompt: x, duration: "{{ secs }}" }\n`,
      );
      expect.unreachable();
    } catch (error) {
      if (!isJobFileError(error)) throw error;
      expect(error.issues.map((i) => `${i.line}:${i.col} ${i.path} ${i.message}`)).toEqual([
        '7:35 generations[0].input.duration item secs=45: must be between 2 and 30, got 45',
      ]);
    }
  });
});
