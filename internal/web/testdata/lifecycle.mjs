// lifecycle.mjs: exports and deletes a chat thread and an agent run from
// the page of `sagasu serve` in Debian's chromium (TestBrowserLifecycle).
// Usage: node lifecycle.mjs LINK ARTIFACT_DIR QUESTION GOAL
// Prints one JSON line; exits non-zero when a step fails.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(path.join(process.env.SAGASU_WEB_TEST_MODULES, 'x.js'));
const { chromium } = require('playwright-core');

const [base, out, question, goal] = process.argv.slice(2);
const report = { errors: [], dialogs: [] };

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const ctx = await browser.newContext({ acceptDownloads: true, viewport: { width: 1400, height: 860 } });
  const page = await ctx.newPage();
  page.on('console', (m) => { if (m.type() === 'error') report.errors.push(m.text()); });
  page.on('response', (r) => { if (r.status() >= 400) report.errors.push('HTTP ' + r.status() + ' ' + r.request().method() + ' ' + r.url()); });
  page.on('pageerror', (e) => report.errors.push(String(e)));
  page.on('dialog', (d) => { report.dialogs.push(d.message()); d.accept(); });
  const download = async (name) => {
    const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name }).click()]);
    const file = path.join(out, dl.suggestedFilename());
    await dl.saveAs(file);
    return { name: dl.suggestedFilename(), text: fs.readFileSync(file, 'utf8') };
  };
  await page.goto(base);
  await page.locator('#mode', { hasText: 'offline' }).waitFor();

  // A thread: ask, export it as Markdown, delete it.
  await page.getByRole('textbox', { name: 'Message' }).fill(question);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('.turn .answer .claims').first().waitFor();
  await page.locator('#send:enabled').waitFor({ timeout: 5000 });
  const md = await download('Export Markdown');
  report.threadFile = md.name;
  report.threadMarkdown = md.text.slice(0, 400);
  await page.locator('#thread-list li').first().waitFor();
  report.threadsBefore = await page.locator('#thread-list li').count();
  await page.locator('#thread-actions').getByRole('button', { name: 'Delete' }).click();
  await page.locator('#thread-actions').waitFor({ state: 'hidden' });
  await page.waitForFunction(() => document.querySelectorAll('#thread-list li').length === 0, null, { timeout: 5000 });
  report.threadsAfter = await page.locator('#thread-list li').count();

  // A run: start it, export it as JSON, delete it.
  await page.getByRole('button', { name: 'Agent runs' }).click();
  await page.getByRole('textbox', { name: 'Goal' }).fill(goal);
  await page.getByRole('button', { name: 'Start run' }).click();
  await page.locator('.run-status', { hasText: /success|failure|stopped/ }).waitFor({ timeout: 120000 });
  const js = await download('Export JSON');
  report.runFile = js.name;
  const doc = JSON.parse(js.text);
  report.runEvents = doc.events.length;
  report.runTitle = doc.run.title;
  await page.locator('#run-list li').first().waitFor();
  report.runsBefore = await page.locator('#run-list li').count();
  await page.locator('.run-head').getByRole('button', { name: 'Delete' }).click();
  await page.waitForFunction(() => document.querySelectorAll('#run-list li').length === 0, null, { timeout: 5000 });
  report.runsAfter = await page.locator('#run-list li').count();
  report.runViewEmpty = (await page.locator('#run-view').innerHTML()).trim() === '';
} catch (e) {
  report.failure = String(e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
process.exit(report.failure ? 1 : 0);
