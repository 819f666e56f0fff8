/**
 * A headless browser for the console's tests: Debian's chromium (/usr/bin/chromium, or
 * CHROMIUM_PATH) driven by playwright-core, which downloads no browser of its own. The
 * flags keep it off the network (this machine's is closed) and out of the GPU; each
 * launch gets a fresh, empty profile (playwright's temporary user-data-dir).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Laptop and phone viewports the console must work at. */
export const LAPTOP = { width: 1366, height: 900 } as const;
export const PHONE = { width: 390, height: 844 } as const;

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `no chromium at ${CHROMIUM_PATH}: install Debian's chromium (scripts/ensure-env.sh does)`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}

/**
 * A full-page screenshot. It goes to `path` (docs/console/…) only with UPDATE_SCREENSHOTS=1, so
 * that a test run leaves the committed pictures alone; otherwise to a temporary folder. Either
 * way the picture is taken and must be a non-empty PNG.
 */
export async function screenshot(page: Page, path: string): Promise<void> {
  const target =
    process.env.UPDATE_SCREENSHOTS === '1'
      ? path
      : join(tmpdir(), 'payflow-bridge-screenshots', basename(path));
  mkdirSync(dirname(target), { recursive: true });
  const png = await page.screenshot({ path: target, fullPage: true, animations: 'disabled' });
  if (png.length < 1000 || png.subarray(1, 4).toString('latin1') !== 'PNG') {
    throw new Error(`screenshot ${basename(path)} is not a picture (${png.length} bytes)`);
  }
}
