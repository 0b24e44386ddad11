/*
 * Extension-host tests of a multi-root workspace (scripts/run-exthost-tests.mjs --multiroot): a
 * .code-workspace with two folders (a copy of src/test/fixture/workspace and one of
 * src/test/fixture/second), a third folder added and a second one removed while the server runs.
 * One fisk-ls serves every folder; its command ids do not collide with another client's.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';
import type { FiskApi } from '../../common/api';
import type { IndexStatus, SearchResult } from '../../common/protocol';
import { runAll, test, waitFor } from './harness';

const EXTENSION_ID = 'fisk.fisk-ls';
let api: FiskApi;
let serverPid: number;

function folders(): readonly vscode.WorkspaceFolder[] {
  return vscode.workspace.workspaceFolders ?? [];
}

/** The folder of a hit (its targetUri lies inside exactly one workspace folder), by folder name. */
function folderOf(targetUri: string): string | undefined {
  return vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(targetUri))?.name;
}

function hitFolders(result: SearchResult): Set<string | undefined> {
  return new Set(result.results.map((hit) => folderOf(hit.location.targetUri)));
}

/** Pids of this extension host's child processes whose command line runs fisk-ls. */
function fiskLsChildren(): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (ppid === process.pid && cmdline.some((part) => path.basename(part) === 'fisk-ls')) {
        pids.push(Number(entry));
      }
    } catch {
      /* the process ended while we looked */
    }
  }
  return pids;
}

async function rootsIndexed(expected: string[]): Promise<IndexStatus> {
  const want = expected.map((p) => fs.realpathSync(p)).sort();
  return waitFor(`the status to list ${want.join(', ')}, each indexed`, async () => {
    const status = await api.status();
    const roots = (status?.roots ?? []).filter((r) => r.documents > 0 && !r.indexing);
    const have = roots.map((r) => r.root).sort();
    return JSON.stringify(have) === JSON.stringify(want) && status?.roots.length === want.length && status;
  }, 40000);
}

test('two folders: the extension activates and starts one fisk-ls for both', async () => {
  assert.equal(folders().length, 2, 'the workspace has two folders');
  const extension = vscode.extensions.getExtension<FiskApi>(EXTENSION_ID);
  assert.ok(extension, `${EXTENSION_ID} is installed`);
  api = await extension.activate();
  await waitFor('the server to run', () => api.serverState.kind === 'running');
  const status = await rootsIndexed(folders().map((f) => f.uri.fsPath));
  assert.equal(status.roots.length, 2);
  const pids = fiskLsChildren();
  assert.equal(pids.length, 1, `one fisk-ls child of the extension host, got ${JSON.stringify(pids)}`);
  serverPid = pids[0];
}, 60000);

test('a search returns results from both folders', async () => {
  const result = await api.search('lighthouse', 20);
  assert.equal(result.status, 'ok');
  const names = hitFolders(result);
  for (const folder of folders()) {
    assert.ok(names.has(folder.name), `a hit in ${folder.name}: ${JSON.stringify(result.results.map((r) => r.location.targetUri))}`);
  }
  const quokka = await api.search('quokka bread');
  assert.deepEqual([...hitFolders(quokka)], [folders()[1].name], 'a term of the second folder only');
  assert.ok(quokka.results[0].citation.startsWith('notes/night-watch.md#'), quokka.results[0].citation);
});

test("the server's command ids are namespaced and not registered as VS Code commands", async () => {
  const commands = await vscode.commands.getCommands(true);
  const ours = commands.filter((c) => c.startsWith('fisk.'));
  const contributed = (vscode.extensions.getExtension(EXTENSION_ID)?.packageJSON.contributes.commands as { command: string }[]).map((c) => c.command);
  assert.deepEqual(ours.sort(), [...contributed].sort(), 'only the contributed fisk.* commands exist');
  assert.ok(!commands.includes('fisk.knowledge.search'), 'fisk.knowledge.search is not a global command');
});

test('another extension can start its own fisk-ls client beside ours', async () => {
  const command = vscode.workspace.getConfiguration('fisk').get<string>('server.command');
  assert.ok(command && path.isAbsolute(command), `fisk.server.command is the server under test (${command})`);
  const dir = fs.mkdtempSync(path.join(path.dirname(folders()[0].uri.fsPath), 'other-'));
  fs.writeFileSync(path.join(dir, 'other.md'), '# Other\n\nAnother client indexes this folder.\n');
  const folder: vscode.WorkspaceFolder = { uri: vscode.Uri.file(dir), name: 'other', index: 0 };
  // The library's defaults: it registers the server's executeCommandProvider ids as VS Code commands.
  const other = new LanguageClient('fisk-other', 'Another fisk-ls client', { command, args: [], options: { cwd: dir } }, {
    documentSelector: [{ scheme: 'file', language: 'markdown', pattern: `${dir}/**` }],
    workspaceFolder: folder,
    initializationOptions: { watch: false },
  });
  try {
    await other.start();
    const capabilities = other.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
    assert.ok(capabilities.length >= 4, `the server advertises its commands: ${JSON.stringify(capabilities)}`);
    for (const id of capabilities) {
      assert.match(id, /^fisk\.knowledge\./, 'server command ids are namespaced');
    }
    assert.ok((await vscode.commands.getCommands(true)).includes('fisk.knowledge.search'), 'the other client registered them');
  } finally {
    await other.stop(5000).catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.equal((await api.search('lighthouse')).status, 'ok', 'ours still answers');
  await waitFor('the other client\'s server to exit, ours to stay', () => JSON.stringify(fiskLsChildren()) === JSON.stringify([serverPid]));
}, 60000);

test('a folder added while running is indexed and searched by the same server', async () => {
  const gamma = path.join(path.dirname(folders()[0].uri.fsPath), 'gamma');
  fs.mkdirSync(path.join(gamma, 'docs'), { recursive: true });
  fs.writeFileSync(path.join(gamma, 'docs/burrows.md'), '# Wombat burrows\n\nA wombat burrow near the lighthouse can be thirty metres long.\n');
  const changed = new Promise<void>((resolve) => {
    const sub = vscode.workspace.onDidChangeWorkspaceFolders(() => (sub.dispose(), resolve()));
  });
  assert.ok(vscode.workspace.updateWorkspaceFolders(folders().length, 0, { uri: vscode.Uri.file(gamma), name: 'gamma' }), 'the folder is added');
  await changed;
  await rootsIndexed(folders().map((f) => f.uri.fsPath));
  const result = await waitFor('a hit in the new folder', async () => {
    const r = await api.search('wombat burrow');
    return r.results.length > 0 && r;
  });
  assert.deepEqual([...hitFolders(result)], ['gamma']);
  assert.deepEqual(fiskLsChildren(), [serverPid], 'no second server, no restart');
}, 60000);

test('a folder removed while running leaves the index of the others', async () => {
  const removed = folders()[1];
  const changed = new Promise<void>((resolve) => {
    const sub = vscode.workspace.onDidChangeWorkspaceFolders(() => (sub.dispose(), resolve()));
  });
  assert.ok(vscode.workspace.updateWorkspaceFolders(removed.index, 1), 'the folder is removed');
  await changed;
  assert.ok(!folders().some((f) => f.name === removed.name));
  const status = await rootsIndexed(folders().map((f) => f.uri.fsPath));
  assert.ok(!status.roots.some((r) => r.root === fs.realpathSync(removed.uri.fsPath)), 'the removed folder is gone from the status');
  const quokka = await api.search('quokka bread');
  assert.ok(!quokka.results.some((r) => r.location.targetUri.includes('/notes/night-watch.md')), 'no hit from the removed folder');
  const both = await api.search('lighthouse', 20);
  assert.deepEqual([...hitFolders(both)].sort(), folders().map((f) => f.name).sort(), 'hits from the remaining folders');
  assert.deepEqual(fiskLsChildren(), [serverPid], 'still the same one server');
}, 60000);

export function run(): Promise<void> {
  return runAll();
}
