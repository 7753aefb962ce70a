/** `text` as a pattern that matches exactly it (what `RegExp.escape` does from Node 24 on). */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
