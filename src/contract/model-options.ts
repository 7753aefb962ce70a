/**
 * The shape of a field's `options` entries is "not shown" in the reference.
 * The emulator serves `{ value, label }`; a real service might serve bare
 * values or `{ label, value }` with other extra keys. Normalise all of them.
 */
export interface NormalisedOption {
  readonly value: unknown;
  readonly label: string;
}

export function normaliseOptions(options: readonly unknown[] | undefined): NormalisedOption[] {
  if (!options) return [];
  return options.map((option) => {
    if (option !== null && typeof option === 'object' && 'value' in option) {
      const { value, label } = option as { value: unknown; label?: unknown };
      return { value, label: typeof label === 'string' ? label : String(value) };
    }
    return { value: option, label: String(option) };
  });
}
