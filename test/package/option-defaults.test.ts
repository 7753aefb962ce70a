/**
 * Options documented once: every optional field of a public options type
 * (each `*Options` type src/index.ts exports, and the emulator's behaviour
 * switches and retry tuning, whose fields are all optional through `Partial`)
 * carries a `@default`, and a `@default` that states a value (a number, a
 * quoted string, `true`, an object) states the value of the defaults
 * constant the code reads. A value written in a doc comment alone fails
 * here, and so does a doc left behind when the constant changes.
 */
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMEOUTS } from '../../src/api/options.js';
import { DEFAULT_RETRY_OPTIONS } from '../../src/api/retry-policy.js';
import {
  ACCOUNT_SEED_DEFAULTS,
  DEFAULT_BEHAVIOUR,
  EMULATOR_DEFAULTS,
  FAULT_DEFAULTS,
} from '../../src/emulator/options.js';
import { DEFAULT_MODEL_CACHE_TTL_MS } from '../../src/job/model-catalog.js';
import { JOURNAL_OPEN_DEFAULTS } from '../../src/journal/open.js';
import { LOCAL_GATE_DEFAULTS } from '../../src/limits/local-gate.js';
import { REDIS_GATE_DEFAULTS } from '../../src/limits/redis/options.js';
import { PLAN_DEFAULTS } from '../../src/plan/plan.js';
import { RUN_DEFAULTS } from '../../src/scheduler/index.js';
import { repoPath } from '../helpers/index.js';

const pick = <T extends object, K extends keyof T>(from: T, ...keys: K[]): Pick<T, K> =>
  Object.fromEntries(keys.map((key) => [key, from[key]])) as Pick<T, K>;

/** Declaring interface → the constant (or the part of it) its defaults are read from. */
const DEFAULTS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  ClientOptions: DEFAULT_TIMEOUTS,
  RetryOptions: { ...DEFAULT_RETRY_OPTIONS },
  EmulatorOptions: EMULATOR_DEFAULTS,
  Behaviour: DEFAULT_BEHAVIOUR,
  AccountSeed: ACCOUNT_SEED_DEFAULTS,
  FaultConfig: pick(FAULT_DEFAULTS, 'slowMs', 'hugeBodyBytes', 'retryAfter'),
  FaultScript: pick(FAULT_DEFAULTS, 'times'),
  CatalogOptions: { ttlMs: DEFAULT_MODEL_CACHE_TTL_MS },
  OpenJournalOptions: JOURNAL_OPEN_DEFAULTS,
  CreateGateOptions: pick(REDIS_GATE_DEFAULTS, 'fallbackPeers', 'share'),
  ConnectOptions: pick(REDIS_GATE_DEFAULTS, 'share'),
  LocalGateOptions: LOCAL_GATE_DEFAULTS,
  PlanOptions: PLAN_DEFAULTS,
  RunJobOptions: RUN_DEFAULTS,
};

/** Public types whose fields are all optional where users pass them (`Partial<...>`). */
const ALL_FIELDS_OPTIONAL = new Set(['RetryOptions', 'Behaviour']);

/** Public types of the emulator's options that are not named `*Options`. */
const ALSO_OPTIONS = new Set(['AccountSeed', 'FaultConfig', 'FaultScript', ...ALL_FIELDS_OPTIONAL]);

/** Starts like a value (not prose): such a `@default` must come from a constant. `false` is the absent switch. */
const STATES_A_VALUE = /^(-?\d|'|"|true\b|\{|\[)/;

interface Field {
  readonly type: string;
  readonly declaredIn: string;
  readonly name: string;
  readonly defaults: readonly string[];
}

function publicOptionFields(): Field[] {
  const program = ts.createProgram([repoPath('src', 'index.ts')], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  });
  const checker = program.getTypeChecker();
  const index = program.getSourceFile(repoPath('src', 'index.ts'));
  const moduleSymbol = index && checker.getSymbolAtLocation(index);
  if (!moduleSymbol) throw new Error('src/index.ts did not compile into a module');
  const fields: Field[] = [];
  const seen = new Set<string>();
  const visit = (symbol: ts.Symbol, typeName: string) => {
    for (const property of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol))) {
      const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
      if (!optional && !ALL_FIELDS_OPTIONAL.has(typeName)) continue;
      const declaration = property.declarations?.[0];
      const owner = declaration?.parent;
      const declaredIn = owner && ts.isInterfaceDeclaration(owner) ? owner.name.text : typeName;
      const key = `${declaredIn}.${property.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const defaults = property
        .getJsDocTags(checker)
        .filter((tag) => tag.name === 'default')
        .map((tag) => ts.displayPartsToString(tag.text).trim());
      fields.push({ type: typeName, declaredIn, name: property.name, defaults });
    }
  };
  for (const exported of checker.getExportsOfModule(moduleSymbol)) {
    if (!/Options$/.test(exported.name) && !ALSO_OPTIONS.has(exported.name)) continue;
    const symbol =
      exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    visit(symbol, exported.name);
  }
  return fields;
}

/** A constant's value as a `@default` writes it: `4`, `'127.0.0.1'`, `{ queued: 2000 }`. */
function asDocText(value: unknown): string | undefined {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return `'${value}'`;
  // A function default is named: `defaultSlotMarginMs`, `Math.random`.
  if (typeof value === 'function') return value.name;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value).map(([key, inner]) => `${key}: ${asDocText(inner)}`);
    return `{ ${entries.join(', ')} }`;
  }
  return undefined;
}

/** The doc states the value, then may explain it: `10485760 (10 MiB)`. */
function statesValue(doc: string, value: string): boolean {
  const named = doc.replace(/^(Math|Date)\./, '');
  return [doc, named].some(
    (text) =>
      text === value || (text.startsWith(value) && /^[\s(,;:]/.test(text.slice(value.length))),
  );
}

describe('public options', () => {
  const fields = publicOptionFields();

  it('finds the options types src/index.ts exports', () => {
    const types = new Set(fields.map((field) => field.type));
    for (const name of [
      'ConnectOptions',
      'ConnectionRunOptions',
      'RunJobOptions',
      'ClientOptions',
      'EmulatorOptions',
      'CreateGateOptions',
      'LocalGateOptions',
      'PlanOptions',
      'OpenJournalOptions',
    ]) {
      expect(types).toContain(name);
    }
  });

  it('document a default for every optional field', () => {
    const undocumented = fields
      .filter((field) => field.defaults.length !== 1 || field.defaults[0] === '')
      .map((field) => `${field.declaredIn}.${field.name} (exported as ${field.type})`);
    expect(undocumented).toEqual([]);
  });

  it('state only defaults the code reads from a constant, with its value', () => {
    const wrong: string[] = [];
    for (const field of fields) {
      const doc = field.defaults[0] ?? '';
      const constant = DEFAULTS[field.declaredIn];
      if (constant && Object.hasOwn(constant, field.name)) {
        const value = asDocText(constant[field.name]);
        if (value !== undefined && !statesValue(doc, value)) {
          wrong.push(
            `${field.declaredIn}.${field.name}: @default ${doc}, the constant holds ${value}`,
          );
        }
      } else if (STATES_A_VALUE.test(doc)) {
        wrong.push(`${field.declaredIn}.${field.name}: @default ${doc} is written in the doc only`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('have a documented field for every key of each defaults constant', () => {
    const documented = new Set(fields.map((field) => `${field.declaredIn}.${field.name}`));
    const orphans = Object.entries(DEFAULTS).flatMap(([type, constant]) =>
      Object.keys(constant)
        .map((name) => `${type}.${name}`)
        .filter((key) => !documented.has(key)),
    );
    expect(orphans).toEqual([]);
  });
});
