/**
 * `{{ name }}` templates in a step's input. A string that is exactly one
 * template takes the variable's value with its type (a JSONL number stays a
 * number); otherwise values are interpolated as text. The input is compiled
 * once per step and rendered per item, so 10,000 items stay cheap.
 */
import { escapeRegExp } from '../shared/index.js';
import type { TemplateValue, TemplateVars } from './types.js';

const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const WHOLE = /^\{\{\s*([^{}]*?)\s*\}\}$/;

/**
 * Where `{{ name }}` is written in a value's source text: group 1 is the
 * name itself (for a caret under it, see `LocateOptions.within`).
 */
export function templateVariablePattern(name: string): RegExp {
  return new RegExp(`\\{\\{\\s*(${escapeRegExp(name)})\\s*\\}\\}`, 'd');
}

export type ValuePath = readonly (string | number)[];

export interface MissingVariable {
  readonly name: string;
  /** Path inside `input`. */
  readonly path: ValuePath;
}

type Part = string | { readonly name: string };

type Compiled =
  | { readonly kind: 'literal'; readonly value: unknown }
  | { readonly kind: 'whole'; readonly name: string }
  | { readonly kind: 'parts'; readonly parts: readonly Part[] }
  | { readonly kind: 'array'; readonly items: readonly Compiled[] }
  | { readonly kind: 'object'; readonly entries: readonly (readonly [string, Compiled])[] };

export interface CompiledTemplate {
  /** Every variable name the input uses. */
  readonly names: ReadonlySet<string>;
  readonly hasTemplates: boolean;
  render(vars: TemplateVars): { value: Record<string, unknown>; missing: MissingVariable[] };
}

export function compileInput(input: Readonly<Record<string, unknown>>): CompiledTemplate {
  const names = new Set<string>();
  const compiled = compile(input, names);
  return {
    names,
    hasTemplates: names.size > 0,
    render(vars) {
      const missing: MissingVariable[] = [];
      const value = render(compiled, vars, [], missing) as Record<string, unknown>;
      return { value, missing };
    },
  };
}

function compile(value: unknown, names: Set<string>): Compiled {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) {
      names.add(whole[1] as string);
      return { kind: 'whole', name: whole[1] as string };
    }
    const parts = splitTemplate(value);
    if (parts.length === 1 && typeof parts[0] === 'string') return { kind: 'literal', value };
    for (const part of parts) if (typeof part !== 'string') names.add(part.name);
    return { kind: 'parts', parts };
  }
  if (Array.isArray(value)) return { kind: 'array', items: value.map((v) => compile(v, names)) };
  if (value !== null && typeof value === 'object') {
    return {
      kind: 'object',
      entries: Object.entries(value).map(([k, v]) => [k, compile(v, names)] as const),
    };
  }
  return { kind: 'literal', value };
}

function splitTemplate(text: string): Part[] {
  const parts: Part[] = [];
  let last = 0;
  for (const match of text.matchAll(TEMPLATE)) {
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push({ name: match[1] as string });
    last = match.index + match[0].length;
  }
  if (last < text.length || parts.length === 0) parts.push(text.slice(last));
  return parts;
}

function render(
  node: Compiled,
  vars: TemplateVars,
  path: (string | number)[],
  missing: MissingVariable[],
): unknown {
  switch (node.kind) {
    case 'literal':
      return node.value;
    case 'whole': {
      const value = lookup(vars, node.name);
      if (value === undefined) missing.push({ name: node.name, path: [...path] });
      return value ?? '';
    }
    case 'parts': {
      let out = '';
      for (const part of node.parts) {
        if (typeof part === 'string') {
          out += part;
          continue;
        }
        const value = lookup(vars, part.name);
        if (value === undefined) missing.push({ name: part.name, path: [...path] });
        else out += String(value);
      }
      return out;
    }
    case 'array':
      return node.items.map((item, i) => render(item, vars, [...path, i], missing));
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, child] of node.entries)
        out[key] = render(child, vars, [...path, key], missing);
      return out;
    }
    default: {
      const never: never = node;
      return never;
    }
  }
}

function lookup(vars: TemplateVars, name: string): TemplateValue | undefined {
  return Object.hasOwn(vars, name) ? vars[name] : undefined;
}
