// Extension-host tests in a real VS Code (editor-testing.md §2.5): code-server's bundled VS Code
// server with --enable-smoke-test-driver loads this folder as an Extension Development Host and
// runs out/test/integration/index.js; the workbench reports the exit code to Playwright.
// Prints the suite's lines and its "N passed, N failed" line; exit code 0 only when all passed.
//   node scripts/run-exthost-tests.mjs              one folder (out/test/integration/index.js)
//   node scripts/run-exthost-tests.mjs --multiroot  a .code-workspace with two folders
//                                                   (out/test/integration/multiroot.js)
//   node scripts/run-exthost-tests.mjs --setup      first use without fisk-ls on PATH: PATH holds
//                                                   only python3, no fisk.server.command; needs
//                                                   server/fisk_ls-*.whl (scripts/bundle-server.sh)
//                                                   and the package index (out/test/integration/setup.js)
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXT_DIR, FIXTURE, freePort, launchBrowser, makeSandbox, QUIET_SETTINGS, requireEnv, startGroup, tail, waitHttp, writeJson, fiskLog } from './lib/sandbox.mjs';

const TIMEOUT_MS = process.argv.includes('--setup') ? 720000 : 240000;
const multiroot = process.argv.includes('--multiroot');
const setup = process.argv.includes('--setup');
const box = makeSandbox(multiroot ? 'multiroot' : setup ? 'setup' : 'exthost');
const port = await freePort();
const results = path.join(box.dir, 'results.txt');
const serverLog = path.join(box.dir, 'server.log');
for (const file of [path.join(box.dir, 'user/User/settings.json'), path.join(box.dir, 'server-data/data/Machine/settings.json')]) {
  writeJson(file, QUIET_SETTINGS);
}
// Workspace settings: in this web workbench, user settings are dropped once the tests write
// workspace settings (they change fisk.topK and fisk.server.command there). Question expansion is
// off except in the tests of it: the test chat model answers every question with the same strings,
// which would refine the other tests' lists.
const settings = { ...(setup ? {} : box.serverSettings), 'fisk.expansion.provider': 'none' };
const extraArgs = [];
if (setup) {
  // A machine without fisk-ls: the extension host gets this PATH as is (no login shell's), holding
  // only a python3 (the interpreter the caller's python3 runs on). pip's own cache is reused.
  const bin = path.join(box.dir, 'bin');
  fs.mkdirSync(bin);
  const python = execFileSync('python3', ['-c', 'import sys; print(getattr(sys, "_base_executable", sys.executable))'], { encoding: 'utf8' }).trim();
  fs.symlinkSync(python, path.join(bin, 'python3'));
  box.env.PATH = bin;
  box.env.PIP_CACHE_DIR = execFileSync('python3', ['-m', 'pip', 'cache', 'dir'], { encoding: 'utf8' }).trim();
  extraArgs.push('--force-disable-user-env');
}
let target = `folder=${encodeURIComponent(box.ws)}`;
if (multiroot) {
  const second = path.join(box.dir, 'second');
  fs.cpSync(path.join(path.dirname(FIXTURE), 'second'), second, { recursive: true });
  const workspace = path.join(box.dir, 'multi.code-workspace');
  writeJson(workspace, { folders: [{ path: box.ws }, { path: second }], settings });
  target = `workspace=${encodeURIComponent(workspace)}`;
} else {
  writeJson(path.join(box.ws, '.vscode/settings.json'), settings);
}
// A chat model provider for the picker's language model expansion, installed as a user extension (the
// payload takes one extensionDevelopmentPath); the server registers what it finds there at startup.
fs.cpSync(path.join(EXT_DIR, 'src/test/fixture/lm-provider'), path.join(box.dir, 'ext/fisk-test.fisk-test-lm-provider-0.0.1'), { recursive: true });
const testsModule = multiroot ? 'out/test/integration/multiroot.js' : setup ? 'out/test/integration/setup.js' : 'out/test/integration/index.js';
const server = startGroup(
  requireEnv('FISK_NODE24'),
  [requireEnv('FISK_VSCODE_SERVER_MAIN'), '--host', '127.0.0.1', '--port', String(port), '--without-connection-token',
    '--accept-server-license-terms', '--enable-smoke-test-driver', '--disable-telemetry', '--disable-workspace-trust',
    '--user-data-dir', path.join(box.dir, 'user'), '--server-data-dir', path.join(box.dir, 'server-data'),
    '--extensions-dir', path.join(box.dir, 'ext'), ...extraArgs],
  { ...box.env, RESULTS_FILE: results },
  serverLog,
);

let browser;
let code = 'error';
try {
  await waitHttp(`http://127.0.0.1:${port}/version`);
  browser = await launchBrowser(box.dir);
  const page = browser.pages()[0] ?? (await browser.newPage());
  const remote = (p) => `vscode-remote://127.0.0.1:${port}${p}`;
  const payload = [
    ['extensionDevelopmentPath', remote(EXT_DIR)],
    ['extensionTestsPath', remote(path.join(EXT_DIR, testsModule))],
  ];
  let exit;
  const exited = new Promise((resolve) => (exit = resolve));
  await page.exposeFunction('codeAutomationExit', (c) => exit(c));
  await page.exposeFunction('codeAutomationLog', () => undefined);
  await page.goto(`http://127.0.0.1:${port}/?${target}&payload=${encodeURIComponent(JSON.stringify(payload))}`);
  let timer;
  code = await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(() => resolve('timeout'), TIMEOUT_MS)))]);
  clearTimeout(timer);
} catch (error) {
  console.log(`FAIL - driver: ${error.stack ?? error}`);
} finally {
  await browser?.close().catch(() => undefined);
  await server.stop();
}

const report = fs.existsSync(results) ? fs.readFileSync(results, 'utf8') : '';
process.stdout.write(report);
const summary = /^(\d+) passed, (\d+) failed$/m.exec(report);
if (code !== 0 || !summary || summary[2] !== '0') {
  console.log(`extension host exit: ${code}; server log (${serverLog}):\n${tail(serverLog, 15)}`);
  console.log(`Fisk output channel: ${fiskLog(box.dir)}`);
  console.log(`sandbox kept for inspection: ${box.dir}`);
  if (!summary) console.log('0 passed, 1 failed');
  process.exit(1);
}
fs.rmSync(box.dir, { recursive: true, force: true });
process.exit(0);
