/**
 * Finds elements in machine-written XML (a spreadsheet's parts) by name,
 * without building a tree: a 100,000-row sheet is tens of MB of XML, and a
 * parsed tree of it is many times that. Enough XML for what `.xlsx` writers
 * emit: any namespace prefix, attributes in either quote, the five named
 * entities and numeric references. Not a general parser (no CDATA, no DTD).
 */

export interface XmlElement {
  /** Attributes by local name (`r:id` is `id`); namespace declarations left out. */
  readonly attrs: Readonly<Record<string, string>>;
  /** The XML between the tags ('' for `<x/>`). */
  readonly body: string;
}

const PATTERNS = new Map<string, RegExp>();

function patternOf(name: string): RegExp {
  let pattern = PATTERNS.get(name);
  if (!pattern) {
    // Attributes may hold `>` inside quotes; the name must end where the tag's name does.
    pattern = new RegExp(
      `<(?:[\\w.-]+:)?${name}(?=[\\s/>])((?:[^>"']|"[^"]*"|'[^']*')*?)(?:/>|>([\\s\\S]*?)</(?:[\\w.-]+:)?${name}\\s*>)`,
      'g',
    );
    PATTERNS.set(name, pattern);
  }
  return new RegExp(pattern);
}

/** Every `name` element in `xml`, in order (not nested in one another). */
export function* elements(xml: string, name: string): Generator<XmlElement> {
  const pattern = patternOf(name);
  for (let match = pattern.exec(xml); match; match = pattern.exec(xml))
    yield { attrs: attributes(match[1] ?? ''), body: match[2] ?? '' };
}

/** The first `name` element in `xml`, if any. */
export function firstElement(xml: string, name: string): XmlElement | undefined {
  return elements(xml, name).next().value ?? undefined;
}

const ATTRIBUTE = /([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

function attributes(text: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  for (const match of text.matchAll(ATTRIBUTE)) {
    const name = match[1] ?? '';
    if (name === 'xmlns' || name.startsWith('xmlns:')) continue;
    attrs[name.slice(name.lastIndexOf(':') + 1)] = decodeXmlText(match[2] ?? match[3] ?? '');
  }
  return attrs;
}

const NAMED: Readonly<Record<string, string>> = {
  lt: '<',
  gt: '>',
  amp: '&',
  quot: '"',
  apos: "'",
};

/** Text with its entity and character references replaced. */
export function decodeXmlText(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-z]+);/g, (whole, ref: string) => {
    if (ref.startsWith('#x')) return String.fromCodePoint(Number.parseInt(ref.slice(2), 16));
    if (ref.startsWith('#')) return String.fromCodePoint(Number.parseInt(ref.slice(1), 10));
    return NAMED[ref] ?? whole;
  });
}
