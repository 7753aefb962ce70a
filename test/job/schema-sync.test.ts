/** The committed JSON Schema must equal the one generated from the zod schema. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { jobJsonSchema } from '../../src/job/index.js';
import { repoPath } from '../helpers/index.js';

const COMMITTED = repoPath('schema', 'job.schema.json');

describe('schema/job.schema.json', () => {
  it('is in sync with src/job/schema.ts (regenerate: node bin/ibatch.js schema > schema/job.schema.json)', () => {
    const committed = readFileSync(COMMITTED, 'utf8');
    expect(committed).toBe(`${JSON.stringify(jobJsonSchema(), null, 2)}\n`);
  });

  it('rejects unknown keys at every level of the format', () => {
    const schema = jobJsonSchema() as {
      additionalProperties?: unknown;
      properties: Record<string, { items?: { additionalProperties?: unknown } }>;
    };
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.generations?.items?.additionalProperties).toBe(false);
  });
});
