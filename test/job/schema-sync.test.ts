/** The committed JSON Schema must equal the one generated from the zod schema. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { jobJsonSchema } from '../../src/job/index.js';
import { provenanceJsonSchema } from '../../src/provenance/index.js';
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

describe('schema/provenance.schema.json', () => {
  it('is in sync with src/provenance/sidecar.ts (regenerate: node bin/ibatch.js schema --provenance > schema/provenance.schema.json)', () => {
    const committed = readFileSync(repoPath('schema', 'provenance.schema.json'), 'utf8');
    expect(committed).toBe(`${JSON.stringify(provenanceJsonSchema(), null, 2)}\n`);
  });
});
