/**
 * Every bound the emulator enforces on a model's input is in the contract it
 * serves, so `validate` refuses what the service would: a property test
 * compares the emulator's verdict (preview-credits, which validates and never
 * charges) with the client's contract check, and the CLI refuses a
 * 20,000-character prompt before anything is spent.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Model, ModelListSchema } from '../../src/contract/index.js';
import { compileContract, MEDIA_FIELD_TYPES } from '../../src/job/contract-check.js';
import { expectNoStack, runCliCaptured, said, tempDir, testEmulator } from '../helpers/index.js';

async function served(baseUrl: string, apiKey: string): Promise<Model[]> {
  const response = await fetch(`${baseUrl}/models`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  return ModelListSchema.parse(await response.json()).models;
}

/** A value for a field: mostly near its bounds, of its type or not. */
function valueFor(field: Model['fields'][number]): fc.Arbitrary<unknown> {
  const numbers = fc.oneof(
    fc.constantFrom(0, -1, 0.5, 1.5, field.min ?? 0, field.max ?? 0),
    fc.double({ min: (field.min ?? -10) - 5, max: (field.max ?? 10) + 5, noNaN: true }),
    fc.integer({ min: (field.min ?? -10) - 5, max: (field.max ?? 10) + 5 }),
  );
  const texts = fc.oneof(
    fc.string({ maxLength: 10 }),
    fc.nat({ max: 6000 }).map((n) => 'x'.repeat(n)),
  );
  return fc.oneof(numbers, texts, fc.boolean());
}

describe('the model contract holds every bound the emulator enforces', () => {
  it('an input the emulator refuses is refused by the contract check too', async () => {
    // Previews are free but counted: a window wide enough for every case.
    const em = await testEmulator({
      rateLimits: { requests: { count: 10_000, windowMs: 60_000 } },
    });
    const key = em.accounts[0]?.apiKey ?? '';
    let refusals = 0;
    const models = await served(em.baseUrl, key);
    const checked = models.map((model) => ({
      model,
      checker: compileContract(model),
      fields: model.fields.filter((f) => !MEDIA_FIELD_TYPES.has(f.type)),
    }));
    const cases = fc.constantFrom(...checked).chain(({ model, checker, fields }) =>
      fc.record({
        model: fc.constant(model),
        checker: fc.constant(checker),
        input: fc.record(Object.fromEntries(fields.map((f) => [f.name, valueFor(f)])), {
          requiredKeys: [],
        }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(cases, async ({ model, checker, input }) => {
        const client = checker.check(input);
        const response = await fetch(`${em.baseUrl}/models/${model.id}/preview-credits`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ input: client.input }),
        });
        const body = (await response.json()) as { error?: { message?: string } };
        const message = body.error?.message ?? '';
        // Media inputs are not generated: a refusal about them says nothing here.
        const aboutMedia = model.fields.some(
          (f) => MEDIA_FIELD_TYPES.has(f.type) && message.startsWith(`input.${f.name}`),
        );
        expect([200, 400], message).toContain(response.status);
        if (response.status === 400 && message.startsWith('input.') && !aboutMedia) {
          refusals += 1;
          const field = /^input\.([^:.[]+)/.exec(message)?.[1];
          // A missing field's problem sits at `input` and names it in backquotes.
          const named = client.problems.map((p) => p.path[0] ?? /`([^`]+)`/.exec(p.message)?.[1]);
          expect(named, `${model.id}: the emulator said ${message}`).toContain(field);
        }
      }),
      { numRuns: 300 },
    );
    // The comparison meant something: the emulator refused many of the cases.
    expect(refusals).toBeGreaterThan(30);
  });

  it('a 20,000-character prompt: validate, plan and run exit 2 naming the bound, nothing charged', async () => {
    const em = await testEmulator();
    const account = em.accounts[0];
    if (!account) throw new Error('no account');
    const work = tempDir('contract-bounds');
    writeFileSync(
      path.join(work, 'job.yaml'),
      `version: 1\nname: long\ngenerations:\n  - id: a\n    model: flux-portrait\n    input:\n      prompt: "${'x'.repeat(20_000)}"\n      seed: 0\n`,
    );
    for (const command of ['validate', 'plan', 'run']) {
      const result = await runCliCaptured(
        [command, 'job.yaml', '--base-url', em.baseUrl],
        { IBATCH_API_KEY: account.apiKey },
        work,
      );
      expect(result.code, said(result)).toBe(2);
      expect(result.stderr).toContain('must be at most 4000 characters, got 20000');
      expect(result.stderr).toContain('must not be 0');
      expectNoStack(result.stderr);
    }
    expect(await em.admin.ledger(account.id)).toEqual([]);
  });

  it('inputs of which the emulator needs one (capabilities.needsOneOf): validate names them, nothing charged', async () => {
    const em = await testEmulator();
    const account = em.accounts[0];
    if (!account) throw new Error('no account');
    const work = tempDir('contract-bounds');
    writeFileSync(
      path.join(work, 'job.yaml'),
      'version: 1\nname: oneof\ngenerations:\n  - id: clip\n    model: kling-i2v\n    input:\n      prompt: "turns"\n',
    );
    const result = await runCliCaptured(
      ['validate', 'job.yaml', '--base-url', em.baseUrl],
      { IBATCH_API_KEY: account.apiKey },
      work,
    );
    expect(result.code, said(result)).toBe(2);
    expect(result.stderr).toContain('model kling-i2v needs one of `imageUrl`, `from:`');
    expect(await em.admin.ledger(account.id)).toEqual([]);
  });
});
