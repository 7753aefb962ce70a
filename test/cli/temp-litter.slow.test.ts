/**
 * What a writer SIGKILLed mid-write leaves beside the manifest, its row spool
 * and the report (a temp file named by its host and pid) is removed by the
 * next run's rewrite of those files; a live writer's temp file is left.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { runCliCaptured, said, testEmulator } from '../helpers/index.js';
import { charges, envFor, imageJob, workspace } from '../scheduler/helpers.js';

const SCALE = 30;

it("a re-run removes the temp files dead writers left beside the manifest and report, not a live writer's", async () => {
  const em = await testEmulator({ timeScale: SCALE });
  const ws = workspace(imageJob({ name: 'litter', n: 2 }));
  const env = envFor(em, SCALE);
  const first = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
  expect(first.code, said(first)).toBe(0);

  const out = path.join(ws.dir, 'out');
  const gone = spawnSync(process.execPath, ['-e', '']).pid;
  const temp = (name: string, pid: number) =>
    path.join(out, `.${name}.${hostname()}.${pid}.0badcafe.tmp`);
  const dead = ['manifest.jsonl', 'manifest.csv', 'manifest.rows', 'report.html'].map((name) =>
    temp(name, gone),
  );
  const live = temp('manifest.jsonl', process.pid);
  for (const file of [...dead, live]) writeFileSync(file, 'half a write');

  const again = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
  expect(again.code, said(again)).toBe(0);
  expect(dead.filter((file) => existsSync(file))).toEqual([]);
  expect(existsSync(live)).toBe(true);
  expect(readdirSync(out).filter((name) => name.endsWith('.tmp'))).toEqual([path.basename(live)]);
  expect(await charges(em)).toHaveLength(2);
}, 60_000);
