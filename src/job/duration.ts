/** Parses "1500ms", "90s", "30m", "2h" into milliseconds. */
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim());
  if (!match) return undefined;
  return Math.round(Number(match[1]) * (UNIT_MS[match[2] as string] ?? 1));
}
