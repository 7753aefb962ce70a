import { describe, expect, it } from 'vitest';
import { SERVICE_RATE_LIMITS } from '../../src/contract/index.js';
import { placesStillCounted } from '../../src/scheduler/run-wiring.js';

const limits = SERVICE_RATE_LIMITS;
const margin = (windowMs: number) => Math.max(25, windowMs * 0.01);

describe('placesStillCounted (the rate gate a restarted run starts with)', () => {
  const now = 1_800_000_000_000;

  it('holds a place from when the service counted each create, unanswered ones from now', () => {
    const window = limits.generations.windowMs;
    const held = placesStillCounted(
      [
        { sentBy: now - 1_000, kind: 'image' },
        { sentBy: null, kind: 'video' },
        { sentBy: now - window - margin(window) - 1, kind: 'image' },
        { sentBy: now - 500, kind: 'training' },
      ],
      limits,
      now,
    );
    expect(held.generations).toEqual([
      now - 1_000 + window + margin(window),
      now + window + margin(window),
    ]);
    expect(held.trainings).toHaveLength(1);
    // Every create is a request too; the one older than the window no longer counts.
    expect(held.requests).toHaveLength(3);
  });

  it('a create recorded after now (the clock was set back since) holds its place one window from now, not from then', () => {
    const window = limits.generations.windowMs;
    const held = placesStillCounted([{ sentBy: now + 3_600_000, kind: 'image' }], limits, now);
    expect(held.generations).toEqual([now + window + margin(window)]);
  });
});
