/**
 * Provenance: a real `ibatch run` against the emulator leaves,
 * beside every output, a sidecar `<file>.json` that validates against
 * schema/provenance.schema.json, and embeds in the file itself the IPTC
 * AI-generated label and the prompt, which exiftool reads back from PNG,
 * JPEG and WebP outputs; the file stays a valid image of the same size. The
 * manifest's sha256 is the file as written, so a no-op run repairs nothing,
 * and a lost sidecar is written again.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import type { ImageFormat } from '../../src/emulator/index.js';
import { readManifest } from '../../src/outputs/index.js';
import { sha256Hex } from '../../src/shared/index.js';
import {
  exifTags,
  hasExiftool,
  repoPath,
  runCliCaptured,
  said,
  testEmulator,
} from '../helpers/index.js';
import { envFor, imageJob, workspace } from '../scheduler/helpers.js';

const SCALE = 30;
const AI_TERM = 'http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia';
/** User text with everything XML must escape, and more than Latin-1. */
const PROMPT = "a <b>quiet</b> street & 'café' 東京 >, scene";

const validate = new Ajv({ allErrors: true, strict: false }).compile(
  JSON.parse(readFileSync(repoPath('schema', 'provenance.schema.json'), 'utf8')),
);

const sha256 = (file: string) => sha256Hex(readFileSync(file));

const FORMATS: Array<[ImageFormat, string, string]> = [
  ['png', 'png', 'image/png'],
  ['jpeg', 'jpg', 'image/jpeg'],
  ['webp', 'webp', 'image/webp'],
];

describe('provenance of downloaded outputs', () => {
  for (const [format, ext, mime] of FORMATS) {
    it.skipIf(!hasExiftool)(
      `${format}: sidecar valid against the schema, label and prompt embedded where exiftool reads them`,
      async () => {
        const em = await testEmulator({ timeScale: SCALE, behaviour: { imageFormat: format } });
        const ws = workspace(imageJob({ name: `prov-${format}`, n: 1, prompt: PROMPT }));
        const env = envFor(em, SCALE);
        const out = path.join(ws.dir, 'out');
        const result = await runCliCaptured(['run', 'job.yaml'], env, ws.dir);
        expect(result.code, said(result)).toBe(0);

        const [row] = readManifest(out);
        expect(row?.file).toMatch(new RegExp(`\\.${ext}$`));
        expect(row?.contentType).toBe(mime);
        const file = path.join(out, row?.file ?? '');
        // The manifest's sha256 is the file as written, metadata included.
        expect(row?.sha256).toBe(sha256(file));

        const sidecar = JSON.parse(readFileSync(`${file}.json`, 'utf8'));
        expect(validate(sidecar), JSON.stringify(validate.errors)).toBe(true);
        expect(sidecar).toMatchObject({
          ai_generated: true,
          digitalSourceType: AI_TERM,
          file: row?.file,
          sha256: row?.sha256,
          embeddedMetadata: true,
          modelId: 'sdxl-lite',
          prompt: `${PROMPT} s1`,
          input: { prompt: `${PROMPT} s1` },
          generationId: row?.generationId,
          job: `prov-${format}`,
          runId: row?.runId,
          step: 'shots',
          item: row?.item,
          n: 1,
          creditsCost: 2,
          refunded: false,
        });
        expect(sidecar.servedSha256).not.toBe(row?.sha256);
        expect(readFileSync(`${file}.json`, 'utf8')).not.toContain(env.IBATCH_API_KEY);

        const tags = exifTags(file);
        expect(tags['XMP-iptcExt:DigitalSourceType']).toBe(AI_TERM);
        expect(tags['XMP-dc:Description']).toBe(`${PROMPT} s1`);
        expect(tags['XMP-xmp:CreatorTool']).toMatch(/^ibatch /);
        expect(String(tags['XMP-ibatch:AiGenerated'] ?? tags['XMP-ibatch:AIGenerated'])).toMatch(
          /true/i,
        );
        expect(tags['XMP-ibatch:GenerationId']).toBe(row?.generationId);
        // Still a valid image of the size served: no warning, no error.
        expect(Object.keys(tags).filter((k) => /Warning|Error/.test(k))).toEqual([]);
        const size = format === 'png' ? 64 : 16;
        expect(tags['Composite:ImageSize']).toBe(`${size}x${size}`);

        // A no-op run: nothing repaired (the recorded hash is the file's), sidecar untouched.
        const before = readFileSync(`${file}.json`, 'utf8');
        const again = await runCliCaptured(['run', 'job.yaml'], env, ws.dir);
        expect(again.code, said(again)).toBe(0);
        expect(said(again)).toMatch(/"repaired":0\b/);
        expect(said(again)).not.toMatch(/downloaded again/);
        expect(readFileSync(`${file}.json`, 'utf8')).toBe(before);

        // A lost sidecar is written again; an edited file is downloaded and labelled again.
        rmSync(`${file}.json`);
        writeFileSync(file, 'not the output');
        const repair = await runCliCaptured(['run', 'job.yaml'], env, ws.dir);
        expect(repair.code, said(repair)).toBe(0);
        expect(sha256(file)).toBe(row?.sha256);
        expect(JSON.parse(readFileSync(`${file}.json`, 'utf8'))).toMatchObject({
          sha256: row?.sha256,
          embeddedMetadata: true,
        });
      },
    );
  }
});
