/**
 * The resume command `ibatch status` prints and run-end notifications send
 * (src/cli/resume-command.ts): one builder, so both say the same thing.
 */
import { describe, expect, it } from 'vitest';
import { resumeCommand } from '../../src/library/index.js';

describe('resumeCommand', () => {
  it('repeats the job and the flags that pick the run, quoted for a shell', () => {
    expect(resumeCommand('job.yaml', {})).toBe('ibatch run job.yaml');
    expect(
      resumeCommand('my jobs/it’s.yaml', { runId: 'ci-42', maxSpend: 50, journal: '/j/db' }),
    ).toBe(`ibatch run 'my jobs/it’s.yaml' --journal /j/db --run-id ci-42 --max-spend 50`);
    expect(resumeCommand("a'b.yaml", { emulator: true })).toBe(
      `ibatch run 'a'\\''b.yaml' --emulator`,
    );
  });

  it('names the limits store without its user name, password or query; keeps --share and --deliver', () => {
    const command = resumeCommand('job.yaml', {
      limitsStore: 'rediss://ops:s3cret@redis.internal:6380/2?password=s3cret',
      share: 2,
      deliver: 's3://bucket/spring',
    });
    expect(command).toBe(
      'ibatch run job.yaml --limits-store rediss://redis.internal:6380/2 --share 2 --deliver s3://bucket/spring',
    );
    expect(resumeCommand('job.yaml', { limitsStore: 'redis://:pw@127.0.0.1:7000' })).toBe(
      'ibatch run job.yaml --limits-store redis://127.0.0.1:7000',
    );
    // Not a URL (run refuses it with exit 2 before anything runs): still no password.
    expect(resumeCommand('job.yaml', { limitsStore: 'redis://:pw@[bad' })).not.toContain('pw');
  });

  it('leaves out --share at its default of 1', () => {
    expect(resumeCommand('job.yaml', { limitsStore: 'redis://h:1', share: 1 })).toBe(
      'ibatch run job.yaml --limits-store redis://h:1',
    );
  });
});
