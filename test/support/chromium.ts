import { chromium, type Browser, type Page, type Request } from 'playwright-core';

/** Debian's chromium (`.ci/run` installs it); playwright-core never downloads a browser. */
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Headless chromium for the browser tests, the latency benchmark and the screenshot: no
 * sandbox (CI runs as root), and none of the background connections it would otherwise
 * make to Google's hosts in a closed network.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/**
 * Logs a staff user in through the dashboard's own login form, in whatever language it
 * shows (the form's one submit button), and waits for the board; `display` ticks
 * "Front-desk display".
 */
export async function logInToDashboard(page: Page, baseUrl: string, email: string, password: string, { display = false } = {}): Promise<void> {
  // The page's requests still unanswered, named when the form never appears.
  const pending = new Map<Request, string>();
  const onRequest = (r: Request): void => void pending.set(r, `${r.method()} ${new URL(r.url()).pathname}`);
  const onDone = (r: Request): void => void pending.delete(r);
  page.on('request', onRequest);
  page.on('requestfinished', onDone);
  page.on('requestfailed', onDone);
  try {
    await page.goto(`${baseUrl}/dashboard/#/login`);
    await page.locator('input[name=email]').waitFor();
  } catch (err) {
    const waiting = [...pending.values()].join(', ') || 'none';
    throw new Error(`The login form did not appear (requests still unanswered: ${waiting}): ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    page.off('request', onRequest);
    page.off('requestfinished', onDone);
    page.off('requestfailed', onDone);
  }
  await page.locator('input[name=email]').fill(email);
  await page.locator('input[name=password]').fill(password);
  if (display) await page.locator('input[name=display]').check();
  // The login's own answer is awaited, so a refused or failed login says why instead of
  // only "the board never came".
  const answered = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/dashboard/api/login');
  await page.locator('form button[type=submit]').click();
  const answer = await answered;
  if (!answer.ok()) throw new Error(`The dashboard login answered ${answer.status()}: ${await answer.text()}`);
  await page.waitForURL(/#\/board$/);
}
