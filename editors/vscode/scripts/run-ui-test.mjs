// One UI test through the real web workbench (editor-testing.md §2.3, §2.4): code-server with the
// packaged .vsix installed, headless chromium via playwright-core. Command palette → "Fisk: Search
// Knowledge" → type a query → the first row shows the snippet as plain text and "also in 2 files",
// and the editor previews it (the matched paragraph selected, the picker still open) → accept it →
// the editor selects the matched paragraph (its line and length) → search again, the row's "Also
// in 2 files" button → a pick of the two copies → accept → the copy opens with the same paragraph
// selected → "Search Knowledge (keep results)", the pin button → the Fisk Results view lists the
// ranked hits with the matched words highlighted. The fixture holds three copies of
// docs/releases/2.x/upgrading.md whose matching words are in the 4th paragraph of a section.
// Screenshots go to $ARTIFACTS_DIR (scripts/test.sh copies them over media/ only with
// FISK_UPDATE_SCREENSHOTS=1). Prints "N passed, N failed"; exit code 0 only when it passed.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort, launchBrowser, makeSandbox, QUIET_SETTINGS, requireEnv, startGroup, tail, waitHttp, writeJson, fiskLog } from './lib/sandbox.mjs';

const QUERY = 'drain the radar relay';
const PARAGRAPH = 'Drain the radar relay';
const COPIES = 2;
const artifacts = process.env.ARTIFACTS_DIR || path.resolve(new URL('../../..', import.meta.url).pathname, 'artifacts');
const vsix = requireEnv('FISK_VSIX');
const codeServer = requireEnv('FISK_CODE_SERVER');
const box = makeSandbox('ui');
const port = await freePort();
const serverLog = path.join(box.dir, 'server.log');
const dirs = ['--user-data-dir', path.join(box.dir, 'user'), '--extensions-dir', path.join(box.dir, 'ext')];
fs.mkdirSync(artifacts, { recursive: true });
writeJson(path.join(box.dir, 'user/User/settings.json'), QUIET_SETTINGS);
// fisk.server.command is machine-overridable: in code-server's (remote) window it is read from the
// remote "Machine" settings, not from the user settings.
writeJson(path.join(box.dir, 'user/Machine/settings.json'), box.serverSettings);

const step = (message) => console.log(`  ${((Date.now() - started) / 1000).toFixed(1)}s ${message}`);
const started = Date.now();
let server;
let browser;
let page;
let ok = false;
try {
  const install = spawnSync(codeServer, [...dirs, '--install-extension', vsix], { env: box.env, encoding: 'utf8' });
  if (install.status !== 0 || !/successfully installed/.test(install.stdout)) {
    throw new Error(`installing ${vsix} failed:\n${install.stdout}${install.stderr}`);
  }
  step(`installed ${path.basename(vsix)}`);
  server = startGroup(codeServer, [...dirs, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry',
    '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', box.ws], box.env, serverLog);
  await waitHttp(`http://127.0.0.1:${port}/healthz`);
  browser = await launchBrowser(box.dir);
  page = browser.pages()[0] ?? (await browser.newPage());
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(box.ws)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 90000 });
  step('workbench loaded');
  // The extension activates on the workspace's markdown files; wait for the index to be ready.
  const fiskItem = page.locator('.statusbar-item', { hasText: /Fisk: (lexical|hybrid|degraded)/ });
  await fiskItem.first().waitFor({ timeout: 60000 });
  step(`status bar: ${(await fiskItem.first().innerText()).trim()}`);

  const openSearch = async (title = 'Fisk: Search Knowledge') => {
    const input = page.locator('.quick-input-widget input');
    // Right after an editor opens, the first F1 can be taken before the workbench has the focus
    // back, or the palette closed again as the focus settles: open it and type the command until
    // the command's row shows.
    for (let attempt = 0; ; attempt++) {
      try {
        await page.keyboard.press('F1');
        await input.waitFor({ state: 'visible', timeout: 5000 });
        await input.fill(`>${title}`, { timeout: 5000 });
        await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 10000 });
        // The Enter can land as the focus settles too (the command does not run): try again.
        await page.keyboard.press('Enter');
        await page.locator('.quick-input-widget input[placeholder*="Search the workspace docs"]').waitFor({ timeout: 10000 });
        break;
      } catch (error) {
        if (attempt === 3) throw error;
        await page.keyboard.press('Escape');
      }
    }
    await page.keyboard.type(QUERY, { delay: 30 });
    const row = page.locator('.quick-input-list .monaco-list-row').first();
    await row.locator('.label-description', { hasText: /\.md:\d+/ }).waitFor({ timeout: 20000 });
    return row;
  };
  // The lines the editor should select: the paragraph that matched, read from the workspace file.
  const paragraphOf = (relpath) => {
    const lines = fs.readFileSync(path.join(box.ws, relpath), 'utf8').split('\n');
    const first = lines.findIndex((l) => l.startsWith(PARAGRAPH));
    let last = first;
    while (lines[last + 1]?.trim()) last++;
    return { line: first + 1, chars: lines.slice(first, last + 1).join('\n').length };
  };
  const selectionShown = async (relpath) => {
    const { line, chars } = paragraphOf(relpath);
    const position = page.locator('[id="status.editor.selection"]', { hasText: `Ln ${line}, Col 1 (${chars} selected)` });
    await position.waitFor({ timeout: 10000 });
    return (await position.innerText()).trim();
  };

  let first = await openSearch();
  const reference = (await first.locator('.label-description').innerText()).trim();
  const [, relpath, line, also] = /^(.+):(\d+) · (also in \d+ files)$/.exec(reference) ?? [];
  if (!relpath) throw new Error(`first row description "${reference}" is not "relpath:line · also in N files"`);
  if (also !== `also in ${COPIES} files`) throw new Error(`expected "also in ${COPIES} files", got "${also}"`);
  if (Number(line) !== paragraphOf(relpath).line) throw new Error(`${reference}: expected line ${paragraphOf(relpath).line}, the paragraph that matched`);
  const snippet = (await first.innerText()).replace(/\s+/g, ' ');
  if (!snippet.includes('Drain the radar relay first') || /[«»]/.test(snippet)) throw new Error(`the row does not show the plain snippet: "${snippet}"`);
  step(`first item: ${reference}; snippet: ${snippet.slice(snippet.indexOf('Drain'), snippet.indexOf('Drain') + 60)}…`);
  // The focused row is previewed: its file in the preview tab, the paragraph selected, the picker still open.
  await page.locator('.tabs-container .tab.active', { hasText: path.basename(relpath) }).waitFor({ timeout: 20000 });
  step(`preview: ${relpath}, ${await selectionShown(relpath)}`);
  if (!(await page.locator('.quick-input-widget').isVisible())) throw new Error('the picker closed while previewing');
  await page.screenshot({ path: path.join(artifacts, 'vscode-search-picker.png') });

  await page.keyboard.press('Enter');
  await page.locator('.tabs-container .tab.active', { hasText: path.basename(relpath) }).waitFor({ timeout: 20000 });
  step(`editor: ${relpath}, ${await selectionShown(relpath)}`);
  await page.screenshot({ path: path.join(artifacts, 'vscode-search-opened.png') });

  first = await openSearch();
  // A row shows its buttons while the pointer is over it; the list can draw its rows again (the
  // focused row's preview, results arriving) between the hover and the click, which then finds the
  // button hidden: hover and click again until the copies' picker opens.
  for (let attempt = 0; ; attempt++) {
    try {
      await first.hover({ timeout: 5000 });
      await first.locator(`.action-label[aria-label="Also in ${COPIES} files"]`).click({ timeout: 5000 });
      await page.locator('.quick-input-widget input[placeholder*="Open another copy"]').waitFor({ timeout: 10000 });
      break;
    } catch (error) {
      if (attempt === 3) throw error;
      await page.mouse.move(0, 0);
    }
  }
  const others = page.locator('.quick-input-list .monaco-list-row', { hasText: 'upgrading.md' });
  await others.nth(COPIES - 1).waitFor({ timeout: 10000 });
  const names = (await others.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
  if (names.length !== COPIES || names.some((n) => n.includes(relpath))) throw new Error(`the second pick lists ${JSON.stringify(names)}`);
  const other = /(docs\/releases\/[\d.]+\/upgrading\.md)/.exec(names[0])[1];
  step(`also: ${names.join(' | ')}`);
  await page.screenshot({ path: path.join(artifacts, 'vscode-search-also.png') });
  await page.keyboard.press('Enter');
  await page.locator('.monaco-breadcrumbs', { hasText: path.dirname(other).split('/').pop() }).first().waitFor({ timeout: 20000 });
  step(`copy: ${other}, ${await selectionShown(other)}`);

  await openSearch('Fisk: Search Knowledge (keep results)');
  await page.locator('.quick-input-widget .action-label[aria-label="Keep these results in the Fisk Results view"]').click();
  const view = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /Fisk Results/i }) });
  const highlighted = view.locator('.monaco-list-row .monaco-highlighted-label .highlight', { hasText: /^Drain$/ });
  await highlighted.first().waitFor({ timeout: 20000 });
  const rows = (await view.locator('.monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
  if (!/^1\. /.test(rows[0] ?? '')) throw new Error(`the results view does not start with the first hit: ${JSON.stringify(rows)}`);
  step(`results view: ${rows.slice(0, 2).join(' | ')}; highlighted: ${(await view.locator('.highlight').allInnerTexts()).slice(0, 4).join(', ')}`);
  await page.screenshot({ path: path.join(artifacts, 'vscode-search-results.png') });
  ok = true;
} catch (error) {
  console.log(`FAIL - UI test: ${error.stack ?? error}`);
  if (page) await page.screenshot({ path: path.join(artifacts, 'vscode-ui-failure.png') }).catch(() => undefined);
  console.log(`code-server log (${serverLog}):\n${tail(serverLog, 15)}`);
  console.log(`Fisk output channel: ${fiskLog(box.dir)}`);
} finally {
  await browser?.close().catch(() => undefined);
  await server?.stop();
}
console.log(ok ? 'ok   - palette → Fisk: Search Knowledge → plain snippet, previewed → accept → matched lines selected → also in 2 files → the copy on the same lines → kept results, words highlighted' : '');
console.log(`${ok ? 1 : 0} passed, ${ok ? 0 : 1} failed`);
if (ok) fs.rmSync(box.dir, { recursive: true, force: true });
else console.log(`sandbox kept for inspection: ${box.dir}`);
process.exit(ok ? 0 : 1);
