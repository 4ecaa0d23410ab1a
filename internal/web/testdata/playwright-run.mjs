// playwright-run.mjs: starts a Plan-and-Act run with the Playwright MCP
// server from the page of `sagasu serve`, or resumes one, in Debian's
// chromium (see TestBrowserPlaywrightRunResumedAfterKill).
// Usage: node playwright-run.mjs start BASE_URL ARTIFACT_DIR GOAL
//        node playwright-run.mjs resume BASE_URL ARTIFACT_DIR GOAL
// start: fills the goal, ticks the playwright server, starts the run and
// waits until its first step is done. resume: opens the run, clicks
// Resume and waits for its outcome. Prints one JSON line; exits non-zero
// when a step fails.
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.SAGASU_WEB_TEST_MODULES, 'x.js'));
const { chromium } = require('playwright-core');

const [mode, base, out, goal] = process.argv.slice(2);
const report = { errors: [] };
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  page.on('console', (m) => { if (m.type() === 'error') report.errors.push(m.text()); });
  page.on('pageerror', (e) => report.errors.push(String(e)));
  await page.goto(base);
  await page.getByRole('button', { name: 'Agent runs' }).click();
  if (mode === 'start') {
    await page.locator('#run-mcp input[value="playwright"]').check();
    await page.getByRole('textbox', { name: 'Goal' }).fill(goal);
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.locator('.plan-step.done').first().waitFor({ timeout: 180000 });
    report.status = await page.locator('.run-status').textContent();
    report.settings = await page.locator('.run-settings').textContent();
    report.steps = await page.locator('.plan-step').count();
    await page.screenshot({ path: path.join(out, 'runs-playwright.png') });
  } else {
    await page.locator('#run-list button', { hasText: goal.slice(0, 30) }).first().click();
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.locator('.run-status', { hasText: /success|failure|stopped/ }).waitFor({ timeout: 90000 });
    report.status = await page.locator('.run-status').textContent();
    report.settings = await page.locator('.run-settings').textContent();
    report.answer = await page.locator('.run-answer').textContent();
    await page.screenshot({ path: path.join(out, 'runs-playwright-resumed.png') });
  }
} catch (e) {
  report.failure = String(e);
  try {
    const page = browser.contexts()[0]?.pages()[0];
    if (page) {
      report.view = (await page.locator('#run-view').textContent()).slice(0, 600);
      report.list = (await page.locator('#run-list').textContent()).slice(0, 300);
      report.notice = await page.locator('#notice').textContent().catch(() => '');
    }
  } catch { /* the report says what failed */ }
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
if (report.failure) process.exit(1);
