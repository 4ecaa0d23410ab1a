// browser.mjs: drives `sagasu serve` in Debian's chromium with
// playwright-core (see TestBrowser in browser_test.go).
// Usage: node browser.mjs LINK ARTIFACT_DIR [QUESTION] [SEARCH] [GOAL] [FOLDER]
// Prints one JSON line: timings, counts and any console errors; exits
// non-zero when a step fails.
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.SAGASU_WEB_TEST_MODULES, 'x.js'));
const { chromium } = require('playwright-core');

const [base, out, question = 'How do I deploy to GitHub Pages?', query = 'sidebar', goal = 'understand how to configure the sidebar', folder = ''] = process.argv.slice(2);
const report = { errors: [] };
const shot = (page, name) => page.screenshot({ path: path.join(out, `${name}.png`), fullPage: false });

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  page.on('console', (m) => { if (m.type() === 'error') report.errors.push(m.text()); });
  page.on('pageerror', (e) => report.errors.push(String(e)));
  // base is the link `sagasu serve` printed (#token=...): the token must
  // leave the address bar, and no cookie may carry it (a browser sends a
  // cookie for 127.0.0.1 to every port).
  await page.goto(base);
  await page.locator('#mode', { hasText: 'offline' }).waitFor();
  report.urlAfterLink = page.url();
  report.scriptCookies = await page.evaluate(() => document.cookie);
  report.cookies = (await page.context().cookies()).length;
  report.tokenKept = await page.evaluate(() => (localStorage.getItem('sagasu.token') || '').length);

  // Chat: ask, watch the trace, get the cited answer.
  await page.getByRole('textbox', { name: 'Message' }).fill(question);
  const t0 = Date.now();
  await page.getByRole('button', { name: 'Send' }).click();
  const trace = page.getByRole('region', { name: 'Trace' });
  await trace.locator('li').first().waitFor();
  report.firstTraceMs = Date.now() - t0;
  // The server answers offline; on a loaded machine (the whole suite, the model servers) that took
  // more than the default 30 s once, so wait as long as for a run.
  await page.locator('.turn .answer .claims').first().waitFor({ timeout: 120000 });
  report.answerMs = Date.now() - t0;
  // The turn is over: Send is back, Stop is gone.
  await page.locator('#send:enabled').waitFor({ timeout: 5000 });
  await page.locator('#stop').waitFor({ state: 'hidden', timeout: 5000 });
  report.traceSteps = await trace.locator('li').count();
  report.citations = await page.locator('.citations li').count();
  report.supportedClaims = await page.locator('.claim.supported').count();
  report.answer = (await page.locator('.turn .answer .claims').first().textContent()).slice(0, 200);
  // Steps unfold: the search's observation.
  await trace.locator('details.observation summary').first().click();
  await trace.locator('details.observation[open] .step-body').first().waitFor();
  await shot(page, 'chat');

  // Open the first citation, then its source.
  await page.locator('.citations .cite-link').first().click();
  await page.locator('#cite-panel .passage').filter({ hasText: /\S/ }).waitFor();
  report.citedPassage = (await page.locator('#cite-panel .passage').textContent()).length;
  await page.getByRole('button', { name: 'open source' }).click();
  await page.locator('#cite-panel .source-text').waitFor();
  await shot(page, 'citation');

  // Search, then evaluate the results against a goal.
  await page.getByRole('button', { name: 'Search', exact: true }).first().click();
  await page.getByRole('textbox', { name: 'Search' }).fill(query);
  await page.getByRole('spinbutton', { name: 'k' }).fill('4');
  await page.getByRole('textbox', { name: 'Search' }).press('Enter');
  const results = page.getByRole('list', { name: 'Results' });
  await results.locator('li').first().waitFor();
  report.results = await results.locator('> li').count();
  report.highlights = await results.locator('mark').count();
  await page.locator('#eval-goal').fill(goal);
  await page.getByRole('button', { name: 'Evaluate results' }).click();
  await page.locator('#eval-out p').first().waitFor();
  report.evaluation = await page.locator('#eval-out p').allTextContents();
  report.evaluationWarn = await page.locator('#eval-out p.warn').count();
  await shot(page, 'search');

  // A document with markup in it shows as text, in results and answers.
  report.injected = [];
  await page.getByRole('textbox', { name: 'Search' }).fill('zebraquux');
  await page.getByRole('textbox', { name: 'Search' }).press('Enter');
  await results.locator('li', { hasText: '<img' }).first().waitFor();
  await page.getByRole('button', { name: 'Chat' }).click();
  await page.getByRole('button', { name: 'New thread' }).click();
  await page.getByRole('textbox', { name: 'Message' }).fill('What is the zebraquux marker?');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('.turn .answer .citations').first().waitFor();
  for (const sel of ['main img', 'main script', 'a[href^="javascript"]']) {
    if (await page.locator(sel).count()) report.injected.push(sel);
  }
  if (await page.evaluate(() => window.__pwned)) report.injected.push('window.__pwned');
  report.hostileAnswer = (await page.locator('.turn .answer').first().textContent()).slice(0, 200);

  // Start a research run and watch it finish.
  await page.getByRole('button', { name: 'Agent runs' }).click();
  await page.getByRole('textbox', { name: 'Goal' }).fill(goal);
  const r0 = Date.now();
  await page.getByRole('button', { name: 'Start run' }).click();
  await page.locator('.run-status', { hasText: /success|failure|stopped/ }).waitFor({ timeout: 120000 });
  report.runMs = Date.now() - r0;
  report.run = await page.locator('.run-status').textContent();
  report.planSteps = await page.locator('.plan-step').count();
  await shot(page, 'runs');

  await page.getByRole('button', { name: 'Agent cache' }).click();
  await page.locator('#cache-list li').first().waitFor();
  report.cacheRecords = await page.locator('#cache-list li').count();
  await shot(page, 'cache');

  await page.getByRole('button', { name: 'Index' }).click();
  await page.locator('#source-table tbody tr').first().waitFor();
  if (folder) {
    await page.getByRole('textbox', { name: 'Folder or URL' }).fill(folder);
    await page.getByRole('button', { name: 'Add to index' }).click();
    await page.locator('#index-progress', { hasText: 'done' }).waitFor();
    report.indexed = await page.locator('#index-progress').textContent();
    await page.locator('#source-table tbody tr', { hasText: 'added.md' }).waitFor();
  }
  report.sources = await page.locator('#source-table tbody tr').count();
  await shot(page, 'index');
} catch (e) {
  report.failure = String(e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
process.exit(report.failure || report.errors.length ? 1 : 0);
