/**
 * One of two copies of an image fails. The item
 * still succeeds with the copy that came back; the failed copy is listed in
 * the manifest and the report with the service's reason (no file), and the
 * report's spend is `status`'s, which is the emulator ledger's, to the credit.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readManifest } from '../../src/outputs/index.js';
import { runCliCaptured, testEmulator } from '../helpers/index.js';
import { envFor, ledgerNet, workspace } from './helpers.js';

const SCALE = 30;

const JOB = `version: 1
name: two-copies
output: out
generations:
  - id: portraits
    model: flux-portrait
    copies: 2
    matrix:
      look: [calm, bold]
    input:
      prompt: "a portrait, {{ look }}"
`;

/** The report's total card `name` (charged, refunded, net). */
function reportTotal(html: string, name: string): number {
  const match = new RegExp(`data-total="${name}">([^<]+)<`).exec(html);
  if (!match?.[1]) throw new Error(`report.html has no ${name} total`);
  return Number(match[1]);
}

describe('a multi-copy generation with a failed copy', () => {
  it('lists the failed copy in manifest and report; report spend = status spend = ledger', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    // The first create's last copy fails (and is refunded); the second create is whole.
    await em.admin.scriptFaults([{ fault: 'copy-fail', endpoint: 'createGeneration' }]);
    const ws = workspace(JOB);
    const env = envFor(em, SCALE);

    const run = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
    expect(run.code, run.stderr + run.stdout).toBe(0);

    const out = path.join(ws.dir, 'out');
    const rows = readManifest(out);
    const files = rows.filter((r) => r.status === 'succeeded');
    const failed = rows.filter((r) => r.status === 'failed');
    expect(files).toHaveLength(3);
    expect(files.every((r) => r.file && r.sha256 && r.current === true)).toBe(true);
    expect(failed).toHaveLength(1);
    const copy = failed[0];
    expect(copy?.file).toBeUndefined();
    expect(copy?.url).toBeNull();
    expect(copy?.generationId).toMatch(/\S/);
    expect(copy?.error).toBe('the provider failed to generate this output');
    expect(copy?.refunded).toBe(true);
    // The failed copy belongs to an item whose other copy is a file.
    expect(files.some((r) => r.item === copy?.item)).toBe(true);

    const html = readFileSync(path.join(out, 'report.html'), 'utf8');
    expect(html).toContain('the provider failed to generate this output');
    expect(html).toContain(copy?.generationId ?? '');

    const status = await runCliCaptured(['status', ws.jobPath, '--json'], env, ws.dir);
    expect(status.code, status.stderr).toBe(0);
    const spend = (
      JSON.parse(status.stdout) as { spend: { charged: number; refunded: number; net: number } }
    ).spend;
    expect(spend.refunded).toBeGreaterThan(0);
    expect(reportTotal(html, 'charged')).toBe(spend.charged);
    expect(reportTotal(html, 'refunded')).toBe(spend.refunded);
    expect(reportTotal(html, 'net')).toBe(spend.net);
    expect(spend.net).toBe(await ledgerNet(em));
  }, 60_000);
});
