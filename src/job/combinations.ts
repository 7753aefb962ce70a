/**
 * A step's combinations of template values: matrix combinations x rows of its
 * `rows:` file (or the matrix alone, or one empty combination).
 */
import { basename } from 'node:path';
import { itemCeilingMessage, matrixCombinationBound, productOf } from './limits.js';
import { expandMatrix, type MatrixSpec } from './matrix.js';
import { RowsFile, RowsFileError, rowsFormatProblems, TooManyRowsError } from './rows.js';
import type { KeyPath } from './source-map.js';
import type { LoadedStep, TemplateVars } from './types.js';

export interface Combination {
  readonly vars: TemplateVars;
  /** 1-based line of its row in the rows file. */
  readonly line?: number;
}

/** A step's combinations, made on each pass (a rows file's are not held: `RowsFile`). */
export interface Combinations {
  forEach(onCombination: (combination: Combination) => void): void;
  /** The rows file's name and columns, for a step with `rows:`. */
  readonly rows?: { readonly file: string; readonly columns: readonly string[] };
}

/** What a step may still expand into, counted before anything is built. */
export interface StepCeiling {
  /** Items each combination becomes: the `from:` step's outputs x `count`. */
  readonly perCombination: number;
  /** Items made by earlier steps. */
  readonly before: number;
  /** Items the job may have (`maxItems`). */
  readonly max: number;
  readonly maxRowsFileBytes: number;
}

/**
 * matrix combinations x rows (or one empty combination). Undefined on error,
 * including a product over the item ceiling: the matrix's product is counted
 * before it is expanded and the rows before they are combined.
 */
export function stepCombinations(
  step: LoadedStep,
  at: (path: KeyPath, message: string) => void,
  ceiling: StepCeiling,
): Combinations | undefined {
  const misplaced = rowsFormatProblems(step.rows, step.rowsFormat ?? {});
  for (const { key, message } of misplaced) at([key], message);
  if (misplaced.length > 0) return undefined;
  const remaining = ceiling.max - ceiling.before;
  const over = (path: KeyPath, combinations: number): boolean => {
    const items = productOf([combinations, ceiling.perCombination]);
    if (items <= remaining) return false;
    at(path, itemCeilingMessage(step.id, 'up to', items, ceiling.before, ceiling.max));
    return true;
  };
  const bound = matrixCombinationBound(step.matrix);
  const blame = step.matrix ? ['matrix'] : step.from !== undefined ? ['from'] : ['count'];
  if (over(blame, bound)) return undefined;
  const matrix = expandMatrix(step.matrix as MatrixSpec | undefined);
  if (step.matrix && matrix.length === 0) {
    at(['matrix'], 'the matrix has no combinations left (everything excluded)');
    return undefined;
  }
  if (step.rows === undefined) {
    if (step.key !== undefined) {
      at(['key'], '`key:` names columns of `rows:`, and this step has no `rows:`');
      return undefined;
    }
    return matrix.map((vars) => ({ vars }));
  }
  let rows: RowsFile;
  try {
    // Stop reading once the rows alone exceed what the job may still make.
    const maxRows = Math.floor(remaining / productOf([matrix.length, ceiling.perCombination]));
    rows = RowsFile.open(
      step.rows,
      basename(step.rows),
      { maxBytes: ceiling.maxRowsFileBytes, maxRows },
      step.rowsFormat,
    );
  } catch (error) {
    if (error instanceof TooManyRowsError) {
      const items = productOf([error.maxRows, matrix.length, ceiling.perCombination]);
      const why = itemCeilingMessage(step.id, 'more than', items, ceiling.before, ceiling.max);
      at(['rows'], `${error.message}: ${why}`);
      return undefined;
    }
    if (error instanceof RowsFileError) {
      at(['rows'], error.message);
      return undefined;
    }
    throw error;
  }
  const matrixNames = new Set(matrix.flatMap((c) => Object.keys(c)));
  const clash = rows.columns.find((name) => matrixNames.has(name));
  if (clash) {
    at(['rows'], `column \`${clash}\` is also a matrix value: rename one of them`);
    return undefined;
  }
  const missing = step.key?.find((name) => !rows.columns.includes(name));
  if (missing !== undefined) {
    at(
      ['key'],
      `key column \`${missing}\` is not a column of ${basename(step.rows)} (columns: ${rows.columns.join(', ')})`,
    );
    return undefined;
  }
  const rowsFacts = { file: basename(step.rows), columns: rows.columns };
  const alone = matrix.length === 1 && Object.keys(matrix[0] ?? {}).length === 0;
  const combinations: Combinations = {
    rows: rowsFacts,
    // Without a matrix the rows are the combinations (their values shared, not copied).
    forEach: alone
      ? (onCombination) => rows.forEach(onCombination)
      : (onCombination) => {
          for (const combo of matrix)
            rows.forEach((row) => {
              onCombination({ vars: { ...combo, ...row.vars }, line: row.line });
            });
        },
  };
  // A `from:` step makes its combinations once per source image: parse the file once.
  if (step.from === undefined) return combinations;
  const held: Combination[] = [];
  combinations.forEach((combo) => {
    held.push(combo);
  });
  return { rows: rowsFacts, forEach: (onCombination) => held.forEach(onCombination) };
}
