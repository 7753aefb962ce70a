/**
 * `ownSidecarOf`: only an output's own sidecar travels with it (delivery,
 * export). A symbolic link at the sidecar's name (which could point at any
 * readable file) and a foreign file that merely has the name are not it.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ownSidecarOf } from '../../src/provenance/index.js';
import { tempDir } from '../helpers/index.js';

const owner = { file: 'shots/a.png', runId: 'run-1', item: 'a', n: 2 };
const sidecarJson = (fields: Record<string, unknown>) => `${JSON.stringify(fields)}\n`;

function folder(): string {
  const dir = tempDir('sidecar');
  mkdirSync(path.join(dir, 'shots'));
  writeFileSync(path.join(dir, 'shots', 'a.png'), 'png');
  return dir;
}

describe('ownSidecarOf', () => {
  it('finds the sidecar naming the same run, item and index', () => {
    const dir = folder();
    const sidecar = path.join(dir, 'shots', 'a.png.json');
    writeFileSync(sidecar, sidecarJson({ runId: 'run-1', item: 'a', n: 2 }));
    expect(ownSidecarOf(dir, owner)).toBe(sidecar);
  });

  it('a row without n means the first output', () => {
    const dir = folder();
    writeFileSync(
      path.join(dir, 'shots', 'a.png.json'),
      sidecarJson({ runId: 'run-1', item: 'a', n: 1 }),
    );
    expect(ownSidecarOf(dir, { ...owner, n: undefined })).toBeDefined();
  });

  it.each([
    ['another run', { runId: 'run-0', item: 'a', n: 2 }],
    ['another item', { runId: 'run-1', item: 'b', n: 2 }],
    ['another index', { runId: 'run-1', item: 'a', n: 1 }],
    ['not a sidecar', { hello: 'world' }],
  ])('a file naming %s is foreign', (_what, fields) => {
    const dir = folder();
    writeFileSync(path.join(dir, 'shots', 'a.png.json'), sidecarJson(fields));
    expect(ownSidecarOf(dir, owner)).toBeUndefined();
  });

  it('not JSON, a folder, or nothing at the name: none', () => {
    const dir = folder();
    expect(ownSidecarOf(dir, owner)).toBeUndefined();
    mkdirSync(path.join(dir, 'shots', 'a.png.json'));
    expect(ownSidecarOf(dir, owner)).toBeUndefined();
    const other = folder();
    writeFileSync(path.join(other, 'shots', 'a.png.json'), 'not json');
    expect(ownSidecarOf(other, owner)).toBeUndefined();
  });

  it('a symbolic link is never it, even to a file that reads like the own sidecar', () => {
    const dir = folder();
    const outside = path.join(tempDir('elsewhere'), 'secret.json');
    writeFileSync(outside, sidecarJson({ runId: 'run-1', item: 'a', n: 2 }));
    symlinkSync(outside, path.join(dir, 'shots', 'a.png.json'));
    expect(ownSidecarOf(dir, owner)).toBeUndefined();
    const inside = path.join(dir, 'shots', 'copy.json');
    writeFileSync(inside, sidecarJson({ runId: 'run-1', item: 'a', n: 2 }));
    const linked = folder();
    symlinkSync(inside, path.join(linked, 'shots', 'a.png.json'));
    expect(ownSidecarOf(linked, owner)).toBeUndefined();
  });
});
