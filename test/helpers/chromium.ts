/** A real headless Chromium (Debian's, which test/setup/system-packages.sh installs) for the tests of the /debug/timeline page. */
import { existsSync } from 'node:fs';
import puppeteer, { type Browser } from 'puppeteer-core';

const CHROMIUM = '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (test/setup/system-packages.sh does)`);
  return puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}
