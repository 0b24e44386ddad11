// One UI test through the real web workbench (editor-testing.md §2.3, §2.4): code-server with the
// packaged .vsix installed, headless chromium via playwright-core. Command palette → "Fisk: Search
// Knowledge" → type a query → accept the first item → the editor shows the cited file and line.
// Screenshots go to $ARTIFACTS_DIR. Prints "N passed, N failed"; exit code 0 only when it passed.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort, launchBrowser, makeSandbox, QUIET_SETTINGS, requireEnv, startGroup, tail, waitHttp, writeJson, fiskLog } from './lib/sandbox.mjs';

const QUERY = 'install pip virtual environment';
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

  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.fill('>Fisk: Search Knowledge');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Fisk: Search Knowledge' }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget input[placeholder*="Search the workspace docs"]').waitFor();
  await page.keyboard.type(QUERY, { delay: 30 });
  const first = page.locator('.quick-input-list .monaco-list-row').first();
  await first.locator('.label-description', { hasText: /\.md:\d+$/ }).waitFor({ timeout: 20000 });
  const reference = (await first.locator('.label-description').innerText()).trim();
  const [, relpath, line] = /^(.+):(\d+)$/.exec(reference);
  step(`first item: ${reference}`);
  await page.screenshot({ path: path.join(artifacts, 'vscode-search-picker.png') });

  await page.keyboard.press('Enter');
  const tab = page.locator('.tabs-container .tab.active', { hasText: path.basename(relpath) });
  await tab.waitFor({ timeout: 20000 });
  const position = page.locator('[id="status.editor.selection"]', { hasText: new RegExp(`^Ln ${line}, Col 1 \\(\\d+ selected\\)`) });
  await position.waitFor({ timeout: 10000 });
  step(`editor: ${path.basename(relpath)}, ${(await position.innerText()).trim()}`);
  await page.screenshot({ path: path.join(artifacts, 'vscode-search-opened.png') });
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
console.log(ok ? 'ok   - palette → Fisk: Search Knowledge → accept → cited file and line' : '');
console.log(`${ok ? 1 : 0} passed, ${ok ? 0 : 1} failed`);
if (ok) fs.rmSync(box.dir, { recursive: true, force: true });
else console.log(`sandbox kept for inspection: ${box.dir}`);
process.exit(ok ? 0 : 1);
