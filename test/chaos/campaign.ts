/**
 * The campaigns the crash test and the chaos driver run: a job file written
 * into a temp folder (with real PNG reference images when it trains an
 * influencer), an emulator in this process, and the `--limits` that match
 * the emulator's time scale.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SERVICE_RATE_LIMITS } from '../../src/contract/index.js';
import {
  type EmulatorOptions,
  pngFor,
  type RunningEmulator,
  startEmulator,
} from '../../src/emulator/index.js';

export interface CampaignShape {
  /** Generations in all (portraits + clips + drafts). */
  readonly generations: number;
  /** Upload 3 images and train one influencer the portraits use. */
  readonly training: boolean;
  /** The influencer's username (a rewrite of the campaign must keep it, or it is a new influencer). */
  readonly username?: string;
}

export interface CampaignFiles {
  readonly jobPath: string;
  readonly journalPath: string;
  readonly outDir: string;
  /** Generation items the job expands to (trainings not included). */
  readonly generationItems: number;
  /** Output files expected when nothing fails. */
  readonly expectedOutputs: number;
  readonly trainings: number;
  readonly username: string;
}

/**
 * Writes the job: `portraits` (flux-portrait, copies 2, optionally with the
 * trained influencer), `clips` (kling-i2v `from: portraits`, one per image)
 * and `drafts` (sdxl-lite) filling up to `generations`.
 */
export async function writeCampaign(dir: string, shape: CampaignShape): Promise<CampaignFiles> {
  const portraits = Math.max(1, Math.round(shape.generations / 10));
  const clips = portraits * 2;
  const drafts = Math.max(1, shape.generations - portraits - clips);
  const lines = ['version: 1', 'name: chaos-campaign', 'output: out', ''];
  const username = shape.username ?? `ava_chaos_${process.pid}_${Date.now().toString(36)}`;
  if (shape.training) {
    await mkdir(path.join(dir, 'refs'), { recursive: true });
    for (let i = 1; i <= 3; i++) {
      await writeFile(path.join(dir, 'refs', `ref-${i}.png`), pngFor(`chaos-ref-${i}`));
    }
    lines.push(
      'uploads:',
      '  refs:',
      '    files: ["refs/*.png"]',
      '',
      'influencers:',
      '  ava:',
      '    name: Ava Chaos',
      `    username: ${username}`,
      '    style: realistic',
      '    gender: female',
      '    images: refs',
      '    consentAcknowledged: true',
      '',
    );
  }
  lines.push(
    'generations:',
    '  - id: portraits',
    '    model: flux-portrait',
    ...(shape.training ? ['    influencer: ava'] : []),
    '    copies: 2',
    '    matrix:',
    `      n: [${range(portraits).join(', ')}]`,
    '    input:',
    '      prompt: "portrait {{ n }} at golden hour"',
    '      aspectRatio: "9:16"',
    '',
    '  - id: clips',
    '    model: kling-i2v',
    '    from: portraits',
    '    input:',
    '      prompt: slow dolly in',
    '      duration: 5',
    '',
    '  - id: drafts',
    '    model: sdxl-lite',
    '    matrix:',
    `      n: [${range(drafts).join(', ')}]`,
    '    input:',
    '      prompt: "draft number {{ n }}"',
    '',
  );
  const jobPath = path.join(dir, 'job.yaml');
  await writeFile(jobPath, lines.join('\n'));
  return {
    jobPath,
    journalPath: path.join(dir, 'journal.db'),
    outDir: path.join(dir, 'out'),
    generationItems: portraits + clips + drafts,
    expectedOutputs: portraits * 2 + clips + drafts,
    trainings: shape.training ? 1 : 0,
    username,
  };
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1);
}

/** Milliseconds the generations limit alone needs for `n` creates at `timeScale`. */
export function creationFloorMs(n: number, timeScale: number): number {
  const w = SERVICE_RATE_LIMITS.generations;
  return Math.ceil(n / w.count) * (w.windowMs / timeScale);
}

export async function startCampaignEmulator(options: EmulatorOptions): Promise<RunningEmulator> {
  return startEmulator({ accounts: [{ credits: 1_000_000 }, { credits: 10_000 }], ...options });
}
