/**
 * docs/outputs.md documents the output template placeholders; every one of
 * them must pass `validate` (the job loader), and a placeholder it does not
 * document must not.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandJob, isJobFileError, loadJob } from '../../src/job/index.js';
import { repoPath, tempDir } from '../helpers/index.js';
import { emulatorCatalog } from '../job/helpers.js';

/** The `{...}` placeholders of the "Output names" section of docs/outputs.md. */
function documentedPlaceholders(): string[] {
  const doc = readFileSync(repoPath('docs', 'outputs.md'), 'utf8');
  const section = doc.split('## Output names')[1]?.split('\n## ')[0] ?? '';
  return [...new Set([...section.matchAll(/`([^`]*\{[^`]*\}[^`]*)`/g)].map((m) => m[1] ?? ''))];
}

/** Problems `validate` reports for a job whose one step uses `filename`. */
function filenameIssues(filename: string): string[] {
  const job = join(tempDir('job'), 'job.yaml');
  writeFileSync(
    job,
    [
      'version: 1',
      'name: docs',
      'generations:',
      '  - id: shots',
      '    model: sdxl-lite',
      '    matrix:',
      '      scene: [beach]',
      `    filename: ${JSON.stringify(filename)}`,
      '    input:',
      '      prompt: "a {{ scene }}"',
    ].join('\n'),
  );
  try {
    expandJob(loadJob(job), emulatorCatalog());
    return [];
  } catch (error) {
    if (!isJobFileError(error)) throw error;
    return error.issues.map((i) => i.message);
  }
}

describe('docs/outputs.md placeholders', () => {
  const documented = documentedPlaceholders();

  it('lists the fields and a template variable', () => {
    for (const name of ['{step}', '{item}', '{n}', '{ext}', '{model}', '{label}', '{scene}']) {
      expect(documented).toContain(name);
    }
  });

  it.each(documented)('%s passes validate', (placeholder) => {
    expect(filenameIssues(`${placeholder}-{n}.{ext}`)).toEqual([]);
  });

  it('an undocumented placeholder or a stray brace does not', () => {
    expect(filenameIssues('{var.scene}-{n}.{ext}').join('\n')).toContain(
      'unknown placeholder {var.scene}',
    );
    expect(filenameIssues('{scene-{n}.{ext}').join('\n')).toContain('unmatched brace');
  });
});
