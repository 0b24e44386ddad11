// Shared pieces of the two integration drivers: a throw-away sandbox (workspace copy, XDG dirs,
// settings), loopback ports, server process groups, and the headless browser.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium } from 'playwright-core';

export const EXT_DIR = path.resolve(new URL('../..', import.meta.url).pathname);
export const FIXTURE = path.join(EXT_DIR, 'src/test/fixture/workspace');

export function requireEnv(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set (scripts/test.sh sets it from scripts/install-tools.sh)`);
  }
  return value;
}

/** Quiet, offline settings for the workbench (editor-testing.md §2.3). */
export const QUIET_SETTINGS = {
  'workbench.startupEditor': 'none',
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'workbench.enableExperiments': false,
  'workbench.tips.enabled': false,
  'chat.disableAIFeatures': true,
  'git.enabled': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
};

/**
 * A temp dir with a copy of the fixture workspace and private XDG dirs (the server's index store goes
 * to XDG_CACHE_HOME). `serverSettings` sets `fisk.server.command` to $FISK_LS: the VS Code server
 * replaces PATH with the login shell's, so a PATH entry would not reach the extension host.
 */
export function makeSandbox(prefix) {
  const fiskLs = requireEnv('FISK_LS');
  if (!fs.existsSync(fiskLs)) {
    throw new Error(`FISK_LS=${fiskLs} does not exist`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `fisk-vscode-${prefix}-`));
  const ws = path.join(dir, 'ws');
  fs.cpSync(FIXTURE, ws, { recursive: true });
  const node24 = path.dirname(requireEnv('FISK_NODE24'));
  const xdg = (name) => {
    const target = path.join(dir, 'xdg', name);
    fs.mkdirSync(target, { recursive: true });
    return target;
  };
  const env = {
    ...process.env,
    PATH: `${node24}:${process.env.PATH}`,
    XDG_CONFIG_HOME: xdg('config'),
    XDG_DATA_HOME: xdg('data'),
    XDG_CACHE_HOME: xdg('cache'),
    XDG_STATE_HOME: xdg('state'),
    EXTENSIONS_GALLERY: JSON.stringify({ serviceUrl: 'http://127.0.0.1:9/gallery' }),
  };
  return { dir, ws, env, serverSettings: { 'fisk.server.command': path.resolve(fiskLs) } };
}

export function writeJson(file, value) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value, null, 2));
}

/** A free loopback port. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts a server in its own process group (setsid); `stop()` kills the whole group. */
export function startGroup(command, args, env, logFile) {
  const log = fs.openSync(logFile, 'w');
  const child = spawn(command, args, { env, detached: true, stdio: ['ignore', log, log] });
  let stopped = false;
  const kill = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      /* already gone */
    }
  };
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    kill('SIGTERM');
    const exited = new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))]);
    kill('SIGKILL');
    fs.closeSync(log);
  };
  process.once('exit', () => kill('SIGKILL'));
  return { child, stop };
}

export async function waitHttp(url, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url);
      if (response.status < 500) return;
    } catch {
      /* not up yet */
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

/** Headless Debian chromium through playwright-core (editor-testing.md §2.4). */
export function launchBrowser(dir) {
  return chromium.launchPersistentContext(path.join(dir, 'browser'), {
    executablePath: process.env.FISK_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

export function tail(file, lines = 40) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** The extension's own log (the "Fisk" output channel), found under the workbench's log folder. */
export function fiskLog(dir) {
  const found = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === 'Fisk.log') found.push(p);
    }
  };
  try {
    walk(dir);
  } catch {
    /* no logs */
  }
  return found.map((f) => `${f}:\n${tail(f, 30)}`).join('\n');
}
