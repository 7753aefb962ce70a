/**
 * Checks one item's `input` against its model's contract (from GET /models),
 * the way the service will: unknown fields, required fields, types, enum
 * options, min/max, maxItems, and the bounds a contract may add (maxLength,
 * integer, exclude). Defaults are applied so the request is explicit.
 * Media fields may hold a URL or a local reference; references are returned
 * for the caller to resolve (it knows the job's directory and upload sets).
 * A field type ibatch does not know is passed through with a warning.
 */
import { type Model, type ModelField, normaliseOptions } from '../contract/index.js';
import { closest, show } from './zod-issues.js';

/** Field types whose values are media URLs (or local references before upload). */
export const MEDIA_FIELD_TYPES: ReadonlySet<string> = new Set(['image', 'video', 'audio']);
const KNOWN_TYPES = new Set(['text', 'number', 'boolean', 'enum', ...MEDIA_FIELD_TYPES]);

export interface FieldProblem {
  /** Path inside `input` (the field name, then list indexes). */
  readonly path: readonly (string | number)[];
  readonly message: string;
  /** Point at the key rather than the value (an unknown field; `input:` itself for a missing one). */
  readonly atKey?: boolean;
}

export interface MediaValue {
  readonly field: string;
  readonly index?: number;
  readonly value: string;
}

export interface CheckedInput {
  readonly input: Record<string, unknown>;
  readonly problems: FieldProblem[];
  /** Media values that are not URLs: local paths or upload references. */
  readonly media: MediaValue[];
}

export interface ContractChecker {
  readonly model: Model;
  /** Fields of types ibatch does not know (passed through unchecked). */
  readonly unknownTypeFields: readonly ModelField[];
  check(input: Readonly<Record<string, unknown>>): CheckedInput;
}

const URL_PATTERN = /^https?:\/\/\S+$/i;

export function isUrl(value: string): boolean {
  return URL_PATTERN.test(value);
}

export function compileContract(model: Model): ContractChecker {
  const fields = new Map(model.fields.map((f) => [f.name, f]));
  const names = [...fields.keys()];
  const options = new Map(model.fields.map((f) => [f.name, normaliseOptions(f.options)]));
  const unknownTypeFields = model.fields.filter((f) => !KNOWN_TYPES.has(f.type));
  return {
    model,
    unknownTypeFields,
    check(raw) {
      const input: Record<string, unknown> = {};
      const problems: FieldProblem[] = [];
      const media: MediaValue[] = [];
      // A misspelt field is one mistake: its guess is not also reported missing.
      const guessed = new Set<string>();
      for (const name of Object.keys(raw)) {
        if (fields.has(name)) continue;
        const guess = closest(name, names);
        if (guess) guessed.add(guess);
        problems.push({
          path: [name],
          atKey: true,
          message: `unknown field \`${name}\` for model ${model.id}${guess ? ` (did you mean \`${guess}\`?)` : ` (fields: ${names.join(', ')})`}`,
        });
      }
      for (const field of model.fields) {
        let value = raw[field.name];
        if (value === undefined || value === null) {
          if (field.default !== undefined && field.default !== null)
            input[field.name] = field.default;
          else if (field.required && !guessed.has(field.name))
            problems.push({
              path: [],
              atKey: true,
              message: `missing required field \`${field.name}\` (${field.type})`,
            });
          continue;
        }
        value = checkValue(field, value, options.get(field.name) ?? [], problems, media);
        input[field.name] = value;
      }
      return { input, problems, media };
    },
  };
}

function checkValue(
  field: ModelField,
  value: unknown,
  opts: ReturnType<typeof normaliseOptions>,
  problems: FieldProblem[],
  media: MediaValue[],
): unknown {
  const path = [field.name];
  const fail = (message: string) => {
    problems.push({ path, message });
    return value;
  };
  switch (field.type) {
    case 'text': {
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      if (typeof value !== 'string') return fail(`expected text, got ${typeName(value)}`);
      if (field.required && value.trim() === '') return fail('must not be empty');
      if (field.maxLength !== undefined && value.length > field.maxLength)
        return fail(`must be at most ${field.maxLength} characters, got ${value.length}`);
      return value;
    }
    case 'number': {
      // CSV values are text: a numeric string in a number field is that number.
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isFinite(n))
        return fail(`expected a number, got ${show(value)}`);
      if (
        (field.min !== undefined && n < field.min) ||
        (field.max !== undefined && n > field.max)
      ) {
        return fail(`must be between ${field.min ?? '-inf'} and ${field.max ?? 'inf'}, got ${n}`);
      }
      if (field.integer && !Number.isInteger(n)) return fail(`must be a whole number, got ${n}`);
      if (field.exclude?.includes(n)) return fail(`must not be ${n}`);
      return n;
    }
    case 'boolean': {
      if (value === 'true' || value === 'false') return value === 'true';
      if (typeof value !== 'boolean') return fail(`expected true or false, got ${show(value)}`);
      return value;
    }
    case 'enum': {
      const match =
        opts.find((o) => o.value === value) ?? opts.find((o) => String(o.value) === String(value));
      if (!match) {
        const allowed = opts.map((o) => JSON.stringify(o.value)).join(', ');
        return fail(`must be one of ${allowed}, got ${show(value)}`);
      }
      return match.value;
    }
    default:
      if (MEDIA_FIELD_TYPES.has(field.type)) return checkMedia(field, value, problems, media);
      return value;
  }
}

function checkMedia(
  field: ModelField,
  value: unknown,
  problems: FieldProblem[],
  media: MediaValue[],
): unknown {
  const maxItems = field.maxItems ?? 1;
  if (Array.isArray(value)) {
    if (maxItems <= 1) {
      problems.push({ path: [field.name], message: `expected one ${field.type}, got a list` });
      return value;
    }
    if (value.length < 1 || value.length > maxItems) {
      problems.push({
        path: [field.name],
        message: `expected 1 to ${maxItems} ${field.type}s, got ${value.length}`,
      });
      return value;
    }
  }
  const list: unknown[] = Array.isArray(value) ? value : [value];
  list.forEach((entry, i) => {
    const index = Array.isArray(value) ? i : undefined;
    const path = index === undefined ? [field.name] : [field.name, index];
    if (typeof entry !== 'string' || entry.trim() === '') {
      problems.push({
        path,
        message: `expected a ${field.type} URL or local file, got ${show(entry)}`,
      });
    } else if (!isUrl(entry)) {
      media.push({ field: field.name, ...(index !== undefined ? { index } : {}), value: entry });
    }
  });
  return value;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a mapping' : typeof value;
}

/** What a model accepts beyond `input`, from `capabilities` when present. */
export interface ModelAbilities {
  readonly copies: boolean;
  readonly maxCopies: number;
  readonly influencer: boolean;
  readonly imageToVideo: boolean;
  /** Groups of inputs of which a request needs one (`generationId`: the top-level field). */
  readonly needsOneOf: readonly (readonly string[])[];
}

/**
 * `capabilities` is "not shown" in the reference. The emulator serves
 * `influencer`, `imageToVideo`, `copies`, `maxCopies`; without them, fall back
 * to what the reference implies: copies and influencers on image models,
 * image-to-video on video models with an image field.
 */
export function abilitiesOf(model: Model): ModelAbilities {
  const caps = model.capabilities ?? {};
  const flag = (names: string[], fallback: boolean) => {
    for (const name of names) if (typeof caps[name] === 'boolean') return caps[name] as boolean;
    return fallback;
  };
  const isImage = model.kind === 'image';
  const copies = flag(['copies'], isImage);
  const maxCopies = typeof caps.maxCopies === 'number' ? caps.maxCopies : copies ? 4 : 1;
  return {
    copies,
    maxCopies,
    influencer: flag(['influencer', 'influencerId'], isImage),
    imageToVideo: flag(
      ['imageToVideo', 'generationId'],
      model.kind === 'video' && model.fields.some((f) => f.type === 'image'),
    ),
    needsOneOf: Array.isArray(caps.needsOneOf)
      ? caps.needsOneOf.filter(
          (group): group is string[] =>
            Array.isArray(group) && group.every((name) => typeof name === 'string'),
        )
      : [],
  };
}
