import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { manifestRows, runCliCaptured, said, testEmulator } from '../helpers/index.js';
import { charges, envFor, workspace } from '../scheduler/helpers.js';

const SCALE = 30;

function job(from: readonly string[]): string {
  return [
    'version: 1',
    'name: pick-demo',
    'output: out',
    'generations:',
    '  - id: photos',
    '    model: sdxl-lite',
    '    copies: 2',
    '    matrix:',
    '      scene: [beach, rooftop]',
    '    input:',
    '      prompt: "a model on a {{ scene }}"',
    '  - id: clips',
    '    model: kling-i2v',
    ...from.map((line) => `    ${line}`),
    '    input:',
    '      prompt: "she turns and smiles, {{ scene }}"',
    '',
  ].join('\n');
}

interface Row {
  step: string;
  item: string;
  file?: string;
  sourceFile?: string;
}

function manifest(dir: string): Row[] {
  return manifestRows<Row>(path.join(dir, 'out', 'manifest.jsonl'));
}

/** The step and item of an idempotency key `ib1-<job>-<run>-<step>-<item>-a<n>-<hash>`. */
const clipCharges = async (em: Parameters<typeof charges>[0]) =>
  (await charges(em)).filter((c) => (c.idempotencyKey ?? '').includes('-clips-'));

describe('from: { step, pick } with the CLI', () => {
  it('animates only the picked images; widening to every image makes only the rest', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(
      job([
        'from:',
        '  step: photos',
        '  pick:',
        '    - { scene: beach, n: 2 }',
        '    - { scene: rooftop, n: 1 }',
      ]),
    );
    const env = envFor(em, SCALE);

    const picked = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
    expect(picked.code, said(picked)).toBe(0);
    const first = await clipCharges(em);
    expect(first).toHaveLength(2);
    const clips = manifest(ws.dir).filter((r) => r.step === 'clips');
    expect(clips.map((r) => r.sourceFile).sort()).toEqual([
      'photos/beach-2.png',
      'photos/rooftop-1.png',
    ]);
    // Each charged key is a picked clip's item key (<source key>.o<n>).
    const keys = first.map((c) => c.idempotencyKey ?? '');
    for (const clip of clips) expect(keys.some((k) => k.includes(`-${clip.item}-a`))).toBe(true);

    ws.write(job(['from: photos']));
    const all = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
    expect(all.code, said(all)).toBe(0);
    const after = await clipCharges(em);
    expect(after).toHaveLength(4);
    const made = after.slice(2).map((c) => c.idempotencyKey ?? '');
    expect(made.some((k) => keys.includes(k))).toBe(false);
    const sources = manifest(ws.dir)
      .filter((r) => r.step === 'clips')
      .map((r) => r.sourceFile)
      .sort();
    expect(sources).toEqual([
      'photos/beach-1.png',
      'photos/beach-2.png',
      'photos/rooftop-1.png',
      'photos/rooftop-2.png',
    ]);
  }, 90_000);
});
