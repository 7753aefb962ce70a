/**
 * The shared 429 pause as one runner knows it: when it ends, and the timer
 * that announces the end. The timer runs in steps (`timerStep`), since a
 * delay past 2^31 - 1 ms would overflow to 1 ms and spin.
 */
import { timerStep } from '../../shared/index.js';

export class PauseClock {
  #until = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly onResume: () => void) {}

  /** When the latest pause ends (epoch ms; in the past when there is none). */
  get until(): number {
    return this.#until;
  }

  /** Extends the pause to `until`; false (nothing changes) unless that is later than now and than the current end. */
  extend(until: number): boolean {
    if (until <= this.#until || until <= Date.now()) return false;
    this.#until = until;
    this.#arm();
    return true;
  }

  close(): void {
    clearTimeout(this.#timer);
  }

  #arm(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(
      () => {
        if (Date.now() < this.#until) this.#arm();
        else this.onResume();
      },
      timerStep(this.#until - Date.now()),
    );
    this.#timer.unref();
  }
}
