// documents.mjs: drives `sagasu serve` in Debian's chromium to see that the
// page shows documents as documents (see TestBrowserDocuments in
// browser_test.go): a table whose cells hold escaped pipes stays a table in
// a search snippet and in the citation panel; a chunk that starts inside a
// long code sample shows as code; heading paths show no backticks; a
// Japanese page shows the trace's own words in Japanese. With the
// VitePress docs it also takes the screenshots docs/web.md shows.
// Usage: node documents.mjs BASE_URL ARTIFACT_DIR TABLE_QUERY CODE_QUERY TABLE_QUESTION JA_QUESTION [SHOT_QUESTION_EN SHOT_QUESTION_JA SHOT_QUERY]
// Prints one JSON line; exits non-zero when a step fails.
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.SAGASU_WEB_TEST_MODULES, 'x.js'));
const { chromium } = require('playwright-core');

const [base, out, tableQuery, codeQuery, tableQuestion, jaQuestion, shotEn, shotJa, shotQuery] = process.argv.slice(2);
const report = { errors: [] };
const shot = (page, name) => page.screenshot({ path: path.join(out, `${name}.png`), fullPage: false });

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});

// table reads a table element: its rows' cells as text.
const table = (loc) => loc.evaluate((t) => [...t.querySelectorAll('tr')].map((tr) => [...tr.children].map((c) => c.textContent)));

async function open(locale) {
  const ctx = await browser.newContext({ locale, viewport: { width: 1400, height: 900 } });
  const page = await ctx.newPage();
  page.on('console', (m) => { if (m.type() === 'error') report.errors.push(m.text()); });
  page.on('pageerror', (e) => report.errors.push(String(e)));
  await page.goto(base);
  await page.locator('#mode').filter({ hasText: /\d/ }).waitFor();
  return { ctx, page };
}

async function search(page, query) {
  await page.locator('nav [data-tab="search"]').click();
  await page.locator('#q').fill(query);
  const before = await page.locator('#search-info').textContent();
  await page.locator('#q').press('Enter');
  await page.waitForFunction((was) => document.querySelector('#search-info').textContent !== was, before);
  await page.locator('#results .snippet').first().waitFor();
}

async function ask(page, question) {
  await page.locator('nav [data-tab="chat"]').click();
  await page.locator('#new-thread').click();
  await page.locator('#message').fill(question);
  await page.locator('#send').click();
  await page.locator('.turn .answer .claims').first().waitFor();
  await page.locator('#send:enabled').waitFor({ timeout: 30000 });
}

// showTrace opens the reflection step, so its words show in full.
async function showTrace(page) {
  const refl = page.locator('#trace-list details.reflection summary').first();
  if (await refl.count()) await refl.click();
}

try {
  const { ctx, page } = await open('en-US');

  // A table whose cells hold `a \| b`: still a table, one cell each.
  await search(page, tableQuery);
  const hit = page.locator('#results > li', { has: page.locator('.uri', { hasText: 'levels.md' }) }).first();
  report.snippetTables = await hit.locator('.snippet table').count();
  report.snippetTable = report.snippetTables ? await table(hit.locator('.snippet table').first()) : [];
  report.snippetText = await hit.locator('.snippet').textContent();

  // The chunk that starts inside a long code sample: code, not prose.
  await search(page, codeQuery);
  const code = page.locator('#results > li').first();
  report.codeBlocks = await code.evaluate((li) => [...li.querySelector('.snippet').children].filter((e) => !e.classList.contains('cut')).map((e) => e.tagName.toLowerCase()));
  report.codeText = await code.locator('.snippet pre code').allTextContents();
  report.codeProse = await code.locator('.snippet p:not(.cut)').allTextContents();
  report.heading = await code.locator('.uri').textContent();

  // The citation panel: the cited passage's table, rendered.
  await ask(page, tableQuestion);
  const cite = page.locator('.citations .cite-link', { hasText: 'levels.md' }).first();
  await cite.click();
  await page.locator('#cite-panel .passage').filter({ hasText: /\S/ }).waitFor();
  const citeTables = page.locator('#cite-panel .passage table');
  report.citeTable = (await citeTables.count()) ? await table(citeTables.first()) : [];
  report.citeHeading = await page.locator('#cite-panel .meta').first().textContent();

  if (shotEn) {
    await ask(page, shotEn);
    await showTrace(page);
    await page.locator('.citations .cite-link').first().click();
    await page.locator('#cite-panel .passage').filter({ hasText: /\S/ }).waitFor();
    await shot(page, 'documents-en');
    await search(page, shotQuery);
    await page.locator('#eval-goal').fill('understand the options of vitepress dev');
    await page.locator('#eval-form button').click();
    await page.locator('#eval-out p').first().waitFor();
    await shot(page, 'documents-search-en');
  }
  await ctx.close();

  // A Japanese reader: the trace's own words in Japanese.
  const ja = await open('ja-JP');
  await ask(ja.page, jaQuestion);
  // The steps sagasu narrates (not the tool calls, their observations or
  // the answer, which hold the documents' words): what each says.
  report.traceJa = await ja.page.locator('#trace-list details:not(.action):not(.observation):not(.answer) summary').evaluateAll(
    (ss) => ss.map((s) => s.textContent.slice(s.querySelector('.kind').textContent.length).trim()));
  report.traceKindsJa = await ja.page.locator('#trace-list .kind').allTextContents();
  if (shotJa) {
    await ask(ja.page, shotJa);
    await showTrace(ja.page);
    await ja.page.locator('.citations .cite-link').first().click();
    await ja.page.locator('#cite-panel .passage').filter({ hasText: /\S/ }).waitFor();
    await shot(ja.page, 'documents-ja');
    await search(ja.page, shotQuery);
    await ja.page.locator('#eval-goal').fill('vitepress dev のオプションを知りたい');
    await ja.page.locator('#eval-form button').click();
    await ja.page.locator('#eval-out p').first().waitFor();
    await shot(ja.page, 'documents-search-ja');
  }
  await ja.ctx.close();
} catch (e) {
  report.failure = String(e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
process.exit(report.failure || report.errors.length ? 1 : 0);
