/**
 * The XMP packet embedded in every output: the IPTC digital source type that
 * marks AI-generated media, the prompt as its description, ibatch as the
 * creator tool, and an `ibatch:` namespace naming the generation. Prompts are
 * user text, so every value is escaped and characters XML 1.0 cannot carry
 * are replaced.
 */

/** IPTC NewsCodes term for media made by a trained model (the "AI-generated" label). */
export const AI_DIGITAL_SOURCE_TYPE =
  'http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia';

/** The namespace of ibatch's own XMP properties. */
export const IBATCH_XMP_NS = 'https://github.com/influencer-batch/ibatch/ns/provenance/1.0/';

/** What the embedded metadata says; all of it is known before the file is placed. */
export interface EmbeddedFacts {
  readonly prompt?: string | undefined;
  readonly modelId: string;
  readonly generationId: string | null;
  readonly job: string;
  readonly runId: string;
  /** e.g. `ibatch 0.1.0`. */
  readonly creatorTool: string;
}

/** Text safe inside an XML element or attribute (XML 1.0 forbids most control characters even escaped). */
export function escapeXml(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

const element = (name: string, value: string): string =>
  `   <${name}>${escapeXml(value)}</${name}>\n`;

/** A complete read-only XMP packet (UTF-8) for `facts`. */
export function xmpPacket(facts: EmbeddedFacts): string {
  const description =
    facts.prompt === undefined
      ? ''
      : `   <dc:description><rdf:Alt><rdf:li xml:lang="x-default">${escapeXml(facts.prompt)}</rdf:li></rdf:Alt></dc:description>\n`;
  return (
    '<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>\n' +
    '<x:xmpmeta xmlns:x="adobe:ns:meta/">\n' +
    ' <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n' +
    '  <rdf:Description rdf:about=""\n' +
    '    xmlns:dc="http://purl.org/dc/elements/1.1/"\n' +
    '    xmlns:xmp="http://ns.adobe.com/xap/1.0/"\n' +
    '    xmlns:Iptc4xmpExt="http://iptc.org/std/Iptc4xmpExt/2008-02-29/"\n' +
    `    xmlns:ibatch="${IBATCH_XMP_NS}">\n` +
    element('Iptc4xmpExt:DigitalSourceType', AI_DIGITAL_SOURCE_TYPE) +
    element('xmp:CreatorTool', facts.creatorTool) +
    description +
    element('ibatch:aiGenerated', 'True') +
    element('ibatch:model', facts.modelId) +
    (facts.generationId === null ? '' : element('ibatch:generationId', facts.generationId)) +
    element('ibatch:job', facts.job) +
    element('ibatch:run', facts.runId) +
    '  </rdf:Description>\n' +
    ' </rdf:RDF>\n' +
    '</x:xmpmeta>\n' +
    '<?xpacket end="r"?>'
  );
}

/** The short human label text chunks carry (what a viewer without XMP support shows). */
export function aiLabel(facts: EmbeddedFacts): string {
  return `AI-generated (${facts.modelId}, IPTC trainedAlgorithmicMedia); made with ${facts.creatorTool}`;
}
