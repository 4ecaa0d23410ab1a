// language.mjs: drives `sagasu serve` in Debian's chromium as a reader
// whose browser asks for Japanese (see TestBrowserLanguage in
// browser_test.go): the page comes up in Japanese, answers a Japanese
// question with Japanese trace labels, renders search snippets as markdown
// (and a hostile one inert), writes dates the Japanese way; then the reader
// switches to English and the choice survives a reload.
// Usage: node language.mjs BASE_URL ARTIFACT_DIR QUESTION SNIPPET_QUERY QUOTE_QUESTION
// Prints one JSON line; exits non-zero when a step fails.
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.SAGASU_WEB_TEST_MODULES, 'x.js'));
const { chromium } = require('playwright-core');

const [base, out, question, snippetQuery, quoteQuestion] = process.argv.slice(2);
const report = { errors: [] };
const shot = (page, name) => page.screenshot({ path: path.join(out, `${name}.png`), fullPage: false });

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
// words reads what the page says in the places every language changes.
const words = (page) => page.evaluate(() => ({
  lang: document.documentElement.lang,
  send: document.querySelector('#send').textContent,
  search: document.querySelector('nav [data-tab="search"]').textContent,
  placeholder: document.querySelector('#message').placeholder,
  select: document.querySelector('#lang').value,
}));
try {
  const ctx = await browser.newContext({ locale: 'ja-JP', viewport: { width: 1400, height: 860 } });
  const page = await ctx.newPage();
  page.on('console', (m) => { if (m.type() === 'error') report.errors.push(m.text()); });
  page.on('pageerror', (e) => report.errors.push(String(e)));
  await page.goto(base);
  await page.locator('#mode', { hasText: 'オフライン' }).waitFor();
  report.ja = await words(page);
  report.acceptLanguage = await page.evaluate(() => navigator.languages.join(','));

  // Chat in Japanese.
  await page.locator('#message').fill(question);
  await page.locator('#send').click();
  await page.locator('.turn .answer .claims').first().waitFor();
  await page.locator('#send:enabled').waitFor({ timeout: 10000 });
  report.traceKinds = await page.locator('#trace-list .kind').allTextContents();
  report.meta = await page.locator('.turn .answer .meta').first().textContent();
  report.answer = (await page.locator('.turn .answer .claims').first().textContent()).slice(0, 300);
  await page.locator('#trace-list details.observation summary').first().click();
  await shot(page, 'chat-ja');

  // Search: a snippet with a heading, a code fence and hostile markup.
  await page.locator('nav [data-tab="search"]').click();
  await page.locator('#q').fill(snippetQuery);
  await page.locator('#q').press('Enter');
  const snippet = page.locator('#results .snippet').first();
  await snippet.waitFor();
  report.snippetHeadings = await snippet.locator('h3, h4, h5, h6').count();
  report.snippetCode = await snippet.locator('pre code').count();
  report.snippetMarks = await page.locator('#results mark').count();
  report.snippetText = (await snippet.textContent()).slice(0, 300);
  report.searchInfo = await page.locator('#search-info').textContent();
  report.injected = [];
  for (const sel of ['main img', 'main script', 'a[href^="javascript"]']) {
    if (await page.locator(sel).count()) report.injected.push(sel);
  }
  if (await page.evaluate(() => window.__pwned)) report.injected.push('window.__pwned');
  await shot(page, 'search-ja');

  // Dates and numbers the Japanese way.
  await page.locator('nav [data-tab="index"]').click();
  await page.locator('#source-table tbody tr').first().waitFor();
  report.dateJa = await page.locator('#source-table tbody tr td').nth(4).textContent();
  report.statsJa = await page.locator('#index-stats').textContent();

  // Switch to English: at once, and after a reload.
  await page.locator('#lang').selectOption('en');
  report.switched = await words(page);
  await page.waitForFunction((was) => document.querySelector('#source-table tbody tr td:nth-child(5)')?.textContent !== was, report.dateJa);
  report.dateEn = await page.locator('#source-table tbody tr td').nth(4).textContent();
  await page.reload();
  await page.locator('#mode', { hasText: 'offline' }).waitFor();
  report.reloaded = await words(page);
  await page.locator('nav [data-tab="chat"]').click();
  await page.locator('#thread-list button').first().click();
  await page.locator('.turn .answer .meta').first().waitFor();
  report.traceKindsEn = await page.locator('#trace-list .kind').allTextContents();
  await shot(page, 'chat-en');

  // An offline answer that would be a list of fragments comes as quoted
  // passages under their headings.
  await page.locator('#new-thread').click();
  await page.locator('#message').fill(quoteQuestion);
  await page.locator('#send').click();
  await page.locator('.turn .answer .claims').first().waitFor();
  report.quotes = await page.locator('.turn .answer .claims blockquote').allTextContents();
  report.quoteAnswer = await page.locator('.turn .answer .claims').first().textContent();
  report.quoteSupported = await page.locator('.turn .answer .claims .claim.supported').first().isVisible() ? await page.locator('.turn .answer .claims .claim.supported').count() : 0;
  await shot(page, 'quote-en');
  await ctx.close();

  // A browser that asks for English gets English.
  const en = await browser.newContext({ locale: 'en-US' });
  const p2 = await en.newPage();
  await p2.goto(base);
  await p2.locator('#mode', { hasText: 'offline' }).waitFor();
  report.en = await words(p2);
  await en.close();
} catch (e) {
  report.failure = String(e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
process.exit(report.failure || report.errors.length ? 1 : 0);
