/**
 * `tags:`: text labels of a job's spend. Valid ones load as they
 * were written; numbers, booleans, bad names and untidy values are refused
 * with `file:line:col` and a message saying what to write instead.
 */
import { describe, expect, it } from 'vitest';
import { loadJobText } from '../../src/job/index.js';

const job = (tags: string) => `version: 1
name: tagged
tags: ${tags}
generations:
  - id: a
    model: sdxl-lite
    input: { prompt: hi }
`;

function problems(tags: string): string {
  try {
    loadJobText(job(tags), '/jobs/job.yaml');
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the job to be refused');
}

describe('tags:', () => {
  it('loads text values exactly as written', () => {
    const loaded = loadJobText(
      job('{ client: acme, campaign: "spring 2026", year: "0012" }'),
      '/j.yaml',
    );
    expect(loaded.tags).toEqual({ client: 'acme', campaign: 'spring 2026', year: '0012' });
    expect(loadJobText(job('{}'), '/j.yaml').tags).toEqual({});
  });

  it('refuses a number or a boolean with a hint to quote it', () => {
    expect(problems('{ year: 2026 }')).toContain(
      '/jobs/job.yaml:3:15  tags.year  must be text, got 2026: quote it ("2026") so it reads back as written',
    );
    expect(problems('{ paid: true }')).toMatch(
      /tags\.paid {2}must be text, got true: quote it \("true"\)/,
    );
  });

  it('refuses names that are not slugs, empty or untidy values, and more than 20 tags', () => {
    expect(problems('{ "bad key": x }')).toMatch(
      /tags\["bad key"\] {2}name "bad key" must be 1-64 letters, digits, "-" or "_"/,
    );
    expect(problems('{ client: "" }')).toMatch(/tags\.client {2}must not be shorter than 1/);
    expect(problems('{ client: " acme" }')).toMatch(/tags\.client {2}must be text without control/);
    expect(problems('{ client: "a\\tb" }')).toMatch(/tags\.client {2}must be text without control/);
    const many = Array.from({ length: 21 }, (_, i) => `t${i}: v`).join(', ');
    expect(problems(`{ ${many} }`)).toMatch(/tags {2}must have at most 20 tags/);
  });
});
