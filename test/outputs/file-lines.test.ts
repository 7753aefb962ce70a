/**
 * The manifest's reading and writing in pieces (src/outputs/file-lines.ts,
 * src/outputs/fs-durable.ts): whatever the pieces' sizes against the
 * megabyte buffers (a line or a write across a buffer's end, longer than a
 * buffer, characters of several bytes split by a buffer's end), the bytes
 * on disk and the lines read back are the text as a whole. Real files.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileLineBytes, fileLines } from '../../src/outputs/file-lines.js';
import { FLUSH_BYTES, TempFileSync } from '../../src/outputs/fs-durable.js';
import { tempDir } from '../helpers/index.js';

/** Lines of varied lengths and scripts: ASCII, 2-, 3- and 4-byte UTF-8. */
function varied(count: number, seed: number): string[] {
  const alphabet = ['a', 'é', '·', '€', '日', '😀', '"', '\\', ' '];
  const lines: string[] = [];
  let state = seed;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state;
  };
  for (let i = 0; i < count; i += 1) {
    let line = `${i}:`;
    for (let run = 0; run < 8; run += 1)
      line += (alphabet[next() % alphabet.length] ?? '').repeat(next() % 400);
    lines.push(line);
  }
  return lines;
}

describe('fileLines', () => {
  it('reads back every line of a file of several buffers, a line longer than a buffer among them', () => {
    const dir = tempDir('file-lines');
    const file = join(dir, 'lines.txt');
    const lines = varied(2_000, 7);
    lines.splice(700, 0, 'x'.repeat(FLUSH_BYTES * 2 + 17), '', '€'.repeat(FLUSH_BYTES));
    writeFileSync(file, `${lines.join('\n')}\n`);
    expect(Buffer.byteLength(readFileSync(file))).toBeGreaterThan(4 * FLUSH_BYTES);
    expect([...fileLines(file)]).toEqual(lines);
  });

  it('gives the last line without a newline, nothing for an empty or missing file', () => {
    const dir = tempDir('file-lines');
    writeFileSync(join(dir, 'torn.txt'), 'first\n{"torn":');
    writeFileSync(join(dir, 'empty.txt'), '');
    expect([...fileLines(join(dir, 'torn.txt'))]).toEqual(['first', '{"torn":']);
    expect([...fileLines(join(dir, 'empty.txt'))]).toEqual([]);
    expect([...fileLines(join(dir, 'missing.txt'))]).toEqual([]);
  });

  it('gives each line as bytes, valid until the next is asked for', () => {
    const dir = tempDir('file-lines');
    const file = join(dir, 'lines.txt');
    const lines = varied(1_500, 11);
    writeFileSync(file, lines.join('\n'));
    const read: string[] = [];
    for (const bytes of fileLineBytes(file)) read.push(bytes.toString('utf8'));
    expect(read).toEqual(lines);
  });
});

describe('TempFileSync', () => {
  it('writes pieces of any size, text or bytes, in order, whatever the buffer holds', () => {
    const dir = tempDir('file-lines');
    const out = new TempFileSync(join(dir, 'out.txt'));
    const pieces: (string | Buffer)[] = [...varied(3_000, 3).map((l) => `${l}\n`)];
    pieces.splice(10, 0, '日'.repeat(FLUSH_BYTES), Buffer.from('raw bytes\n'), '');
    pieces.splice(2_000, 0, 'y'.repeat(FLUSH_BYTES * 3 + 1));
    for (const piece of pieces) out.write(piece);
    out.flush();
    const expected = Buffer.concat(
      pieces.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)),
    );
    expect(readFileSync(out.temp).equals(expected)).toBe(true);
    out.abort();
  });
});
