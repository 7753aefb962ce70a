/**
 * What a long-lived AbortSignal still holds of the work that used it: the
 * entries of every collection Node keeps on it under its private symbols
 * (its listeners, and the signals `AbortSignal.any` made from it). Read
 * generically, not by symbol name, so a Node that renames them still counts.
 */
export function entriesHeldBy(signal: AbortSignal): number {
  let held = 0;
  for (const symbol of Object.getOwnPropertySymbols(signal)) {
    const value: unknown = (signal as unknown as Record<symbol, unknown>)[symbol];
    const size = (value as { size?: unknown } | null)?.size;
    if (typeof size === 'number') held += size;
  }
  return held;
}
