/**
 * `from: { step, pick }`: only the picked images of the source step become
 * items, with the very keys the plain `from:` gives them; a pick that names
 * an unknown variable, an image number past the copies, or picks nothing is
 * an error at its file:line:col.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandJob, isJobFileError, type JobItem, loadJob } from '../../src/job/index.js';
import { tempDir } from '../helpers/index.js';
import { emulatorCatalog } from './helpers.js';

const models = emulatorCatalog();

function expand(from: string, files: Record<string, string> = {}): JobItem[] {
  const dir = tempDir('pick');
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  const yaml = [
    'version: 1',
    'name: t',
    'generations:',
    '  - id: photos',
    '    model: flux-portrait',
    '    copies: 2',
    '    matrix:',
    '      scene: [beach, rooftop bar, "5"]',
    '      mood: [calm]',
    '    input: { prompt: "{{ scene }} {{ mood }}" }',
    '  - id: clips',
    '    model: kling-i2v',
    ...from.split('\n').map((line) => `    ${line}`),
    '    input: { prompt: "moving {{ scene }}" }',
    '',
  ].join('\n');
  writeFileSync(join(dir, 'job.yaml'), yaml);
  return [...expandJob(loadJob(join(dir, 'job.yaml')), models).items];
}

function problems(from: string): string[] {
  try {
    expand(from);
  } catch (error) {
    if (!isJobFileError(error)) throw error;
    return error.issues.map((i) => `${i.line}:${i.col} ${i.path} ${i.message}`);
  }
  return expect.unreachable('the job should be invalid');
}

const clipsOf = (items: readonly JobItem[]) => items.filter((i) => i.stepId === 'clips');

describe('from: { step, pick }', () => {
  it('animates only the picked images, with the keys plain `from:` gives them', () => {
    const all = clipsOf(expand('from: photos'));
    expect(all).toHaveLength(6);
    const picked = clipsOf(
      expand(
        [
          'from:',
          '  step: photos',
          '  pick:',
          '    - { scene: rooftop bar, n: 2 }',
          '    - scene: beach',
          '    - { scene: 5 }', // a number matches the value "5" (compared as text)
        ].join('\n'),
      ),
    );
    expect(picked.map((i) => i.label)).toEqual([
      'scene=beach, mood=calm > output 1',
      'scene=beach, mood=calm > output 2',
      'scene=rooftop bar, mood=calm > output 2',
      'scene=5, mood=calm > output 1',
      'scene=5, mood=calm > output 2',
    ]);
    const byKey = new Map(all.map((i) => [i.key, i]));
    for (const item of picked) expect(item).toEqual(byKey.get(item.key));
  });

  it('picks the same image once when two entries match it', () => {
    const picked = clipsOf(
      expand('from:\n  step: photos\n  pick:\n    - { n: 1 }\n    - { scene: beach, n: 1 }'),
    );
    expect(picked.map((i) => `${i.vars.scene} ${i.source?.outputIndex}`)).toEqual([
      'beach 0',
      'rooftop bar 0',
      '5 0',
    ]);
  });

  it('reports an unknown variable, an image number past the copies and an empty pick at their keys', () => {
    expect(
      problems(
        [
          'from:',
          '  step: photos',
          '  pick:',
          '    - { scen: beach }',
          '    - { scene: beach, n: 3 }',
          '    - { scene: beachh }',
          '    - { scene: beach, mood: stormy }',
        ].join('\n'),
      ),
    ).toEqual([
      '16:13 generations[1].from.pick[0].scen step `photos` has no template variable `scen` (did you mean `scene`? its variables: scene, mood)',
      '17:30 generations[1].from.pick[1].n step `photos` makes 2 images per generation: `n` is 1-2',
      '18:11 generations[1].from.pick[2] picks no image of step `photos`: no item has scene "beachh" (did you mean "beach"?) (its values: beach, rooftop bar, 5)',
      '19:11 generations[1].from.pick[3] picks no image of step `photos`: no item has mood "stormy" (its values: calm)',
    ]);
  });

  it('names an unknown source step at `step:` and a misspelt key inside `from:`', () => {
    expect(problems('from:\n  step: photo\n  pick: [{ n: 1 }]')).toEqual([
      '14:13 generations[1].from.step no step `photo` (steps: photos, clips)',
    ]);
    // One mistake, reported once: at the misspelling, not also as a missing `pick`.
    expect(problems('from:\n  step: photos\n  pik: [{ n: 1 }]')).toEqual([
      '15:7 generations[1].from.pik unknown key `pik` (did you mean `pick`?)',
    ]);
  });
});
