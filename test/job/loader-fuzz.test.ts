/** Arbitrary input never crashes the loader with anything but a JobFileError. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { isJobFileError, loadJobText } from '../../src/job/index.js';

function loadOrJobFileError(text: string): void {
  try {
    loadJobText(text, '/nonexistent/job.yaml', 'job.yaml');
  } catch (error) {
    if (!isJobFileError(error)) throw error;
    for (const issue of error.issues) {
      expect(issue.line).toBeGreaterThanOrEqual(1);
      expect(issue.col).toBeGreaterThanOrEqual(1);
    }
  }
}

describe('loader robustness', () => {
  it('arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => loadOrJobFileError(text)),
      { numRuns: 300 },
    );
  });

  it('YAML-ish text built from YAML tokens', () => {
    const token = fc.constantFrom(
      'version: 1\n',
      'name: x\n',
      'generations:\n',
      '  - id: a\n',
      '    model: m\n',
      '    input: {prompt: "{{ a }}"}\n',
      '&a [*a]\n',
      '- ',
      ': ',
      '"',
      "'",
      '{',
      '}',
      '[',
      ']',
      '\t',
      '  ',
      '\n',
      '!!binary ',
      '? ',
      '---\n',
      '%YAML 1.2\n',
      '#',
      'matrix: {a: [1]}\n',
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 40 }), (tokens) =>
        loadOrJobFileError(tokens.join('')),
      ),
      { numRuns: 400 },
    );
  });

  it('arbitrary JSON values as YAML', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => loadOrJobFileError(stringify(value))),
      { numRuns: 300 },
    );
  });

  it('alias bombs are refused, not expanded', () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++)
      bomb.push(
        `${'b'.repeat(i)}: &${'b'.repeat(i)} [${Array(9)
          .fill(`*${i === 1 ? 'a' : 'b'.repeat(i - 1)}`)
          .join(',')}]`,
      );
    expect(() => loadJobText(bomb.join('\n'), '/x/job.yaml')).toThrow(/alias|problem/i);
  });
});
