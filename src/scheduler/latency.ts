/**
 * A model's typical latency from its `inferenceTime` text ("~20s", "1-2 min",
 * "30 seconds"): the upper figure, so polls are not wasted on work that
 * cannot be done yet. Unknown text falls back to 30 s.
 */
const UNIT_MS: ReadonlyArray<[RegExp, number]> = [
  [/^ms$/, 1],
  [/^(s|secs?|seconds?)$/, 1000],
  [/^(m|mins?|minutes?)$/, 60_000],
  [/^(h|hours?)$/, 3_600_000],
];

export const DEFAULT_LATENCY_MS = 30_000;

export function parseInferenceTime(text: string | undefined): number {
  if (!text) return DEFAULT_LATENCY_MS;
  const match =
    /(\d+(?:\.\d+)?)\s*(?:[-–]|to)?\s*(\d+(?:\.\d+)?)?\s*(ms|s|sec|seconds?|m|mins?|minutes?|h|hours?)\b/i.exec(
      text,
    );
  if (!match) return DEFAULT_LATENCY_MS;
  const value = Number(match[2] ?? match[1]);
  const unit = (match[3] ?? 's').toLowerCase();
  const factor = UNIT_MS.find(([pattern]) => pattern.test(unit))?.[1] ?? 1000;
  return Number.isFinite(value) && value > 0 ? value * factor : DEFAULT_LATENCY_MS;
}
