/**
 * @module provenance
 * What every output says about how it was made: the sidecar `<file>.json`
 * (schema, JSON Schema) and metadata embedded in the file's bytes (XMP with
 * the IPTC AI-generated source type; PNG text chunks), pure functions over
 * bytes that never re-encode pixels.
 */

export { embedProvenance } from './embed.js';
export {
  ownSidecarOf,
  type Provenance,
  ProvenanceSchema,
  provenanceJsonSchema,
  sidecarPathOf,
  writeSidecar,
} from './sidecar.js';
export { AI_DIGITAL_SOURCE_TYPE, type EmbeddedFacts, IBATCH_XMP_NS } from './xmp.js';
