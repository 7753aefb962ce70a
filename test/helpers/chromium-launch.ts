/**
 * Launches the headless Debian Chromium (`.ci/run` installs it) for the
 * browser tests and the page benchmark (no vitest here: bench/ runs outside
 * it). The flags keep it off this machine's closed network.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = process.env.IBATCH_CHROMIUM ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install it with ` +
        '`apt-get install -y --no-install-recommends chromium` (or set IBATCH_CHROMIUM)',
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
