/**
 * The embedders over real bytes (the emulator's outputs), read back by
 * exiftool: the AI label and the prompt, XML-escaped, with no warning and
 * the same dimensions; a file that already carries XMP or C2PA credentials,
 * or is not well formed, is left as served.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { jpegFor, webpFor } from '../../src/emulator/image-formats.js';
import { pngFor, videoFor } from '../../src/emulator/png.js';
import { type EmbeddedFacts, embedProvenance } from '../../src/provenance/index.js';
import { exifTags, hasExiftool, tempDir } from '../helpers/index.js';

const AI_TERM = 'http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia';
const FACTS: EmbeddedFacts = {
  prompt: 'a <b>"bold"</b> & \'brave\' prompt ]]> \u0001 東京',
  modelId: 'sdxl-lite',
  generationId: 'gen-1',
  job: 'campaign & co',
  runId: 'run-1',
  creatorTool: 'ibatch 0.1.0',
};

function exif(bytes: Buffer, ext: string): Record<string, unknown> {
  const file = path.join(tempDir('prov'), `f.${ext}`);
  writeFileSync(file, bytes);
  return exifTags(file);
}

const CASES: Array<[string, string, Buffer, string]> = [
  ['image/png', 'png', pngFor('a'), '64x64'],
  ['image/jpeg', 'jpg', jpegFor('a'), '16x16'],
  // A simple (VP8L) WebP: converted to the extended format for its XMP chunk.
  ['image/webp', 'webp', webpFor('a'), '16x16'],
  ['video/mp4', 'mp4', videoFor('a'), '160x90'],
];

describe('embedProvenance', () => {
  for (const [mime, ext, served, size] of CASES) {
    it.skipIf(!hasExiftool)(
      `${mime}: exiftool reads the AI label and the prompt; no warning, same size`,
      () => {
        const before = exif(served, ext);
        const stamped = embedProvenance(mime, served, FACTS);
        expect(stamped).toBeDefined();
        const tags = exif(stamped ?? Buffer.alloc(0), ext);
        expect(tags['XMP-iptcExt:DigitalSourceType']).toBe(AI_TERM);
        // Control characters XML 1.0 cannot carry become U+FFFD; the rest round-trips.
        expect(tags['XMP-dc:Description']).toBe(FACTS.prompt?.replace('\u0001', '\uFFFD'));
        expect(tags['XMP-xmp:CreatorTool']).toBe('ibatch 0.1.0');
        expect(tags['XMP-ibatch:Job']).toBe('campaign & co');
        expect(Object.keys(tags).filter((k) => /Warning|Error/.test(k))).toEqual([]);
        expect(tags['Composite:ImageSize']).toBe(size);
        expect(before['Composite:ImageSize']).toBe(size);
        // Deterministic (a resume recognises its own file), and never twice.
        expect(embedProvenance(mime, served, FACTS)?.equals(stamped ?? Buffer.alloc(0))).toBe(true);
        expect(embedProvenance(mime, stamped ?? Buffer.alloc(0), FACTS)).toBeUndefined();
      },
    );
  }

  it.skipIf(!hasExiftool)('PNG: the prompt and the label as text chunks too', () => {
    const tags = exif(embedProvenance('image/png', pngFor('a'), FACTS) ?? Buffer.alloc(0), 'png');
    expect(tags['PNG:Description']).toBe(FACTS.prompt);
    expect(String(tags['PNG:Disclaimer'])).toMatch(/^AI-generated \(sdxl-lite/);
  });

  it('leaves C2PA-signed, malformed and other files as served', () => {
    const png = pngFor('a');
    // A caBX chunk (C2PA) before IEND: any change would break its signature.
    const iend = png.length - 12;
    const cabx = Buffer.from([0, 0, 0, 0, 0x63, 0x61, 0x42, 0x58, 0, 0, 0, 0]);
    const signed = Buffer.concat([png.subarray(0, iend), cabx, png.subarray(iend)]);
    expect(embedProvenance('image/png', signed, FACTS)).toBeUndefined();
    const app11 = Buffer.from([0xff, 0xeb, 0, 4, 0x4a, 0x50]);
    const jpeg = jpegFor('a');
    expect(
      embedProvenance(
        'image/jpeg',
        Buffer.concat([jpeg.subarray(0, 2), app11, jpeg.subarray(2)]),
        FACTS,
      ),
    ).toBeUndefined();
    expect(embedProvenance('image/png', png.subarray(0, 40), FACTS)).toBeUndefined();
    expect(embedProvenance('video/mp4', videoFor('a').subarray(0, 100), FACTS)).toBeUndefined();
    expect(embedProvenance('image/gif', Buffer.from('GIF89a'), FACTS)).toBeUndefined();
  });
});
