/*
 * Extension-host tests: run inside a real VS Code (code-server's bundled server with
 * --enable-smoke-test-driver, see scripts/run-integration.mjs) against the real fisk-ls, on a
 * temp copy of src/test/fixture/workspace. `run()` rejecting means failure.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { FiskApi } from '../../common/api';
import type { PickerView } from '../../common/search';
import type { LocationLink, ReindexResult, ShowResult, IndexStatus } from '../../common/protocol';
import { note, runAll, test, waitFor } from './harness';

const EXTENSION_ID = 'fisk.fisk-ls';
const FIXTURE_FILES = 7;
let api: FiskApi;

function root(): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'a workspace folder is open');
  return folder.uri;
}

/**
 * Runs Fisk: Search Knowledge with `query`, waits until the workbench shows a list for it with a row
 * active, and accepts that row; resolves with the command's result.
 */
async function searchAndAccept(query: string): Promise<string | undefined> {
  const views: PickerView[] = [];
  const sub = api.searchPicker.onDidChange((view) => views.push(view));
  try {
    const result = Promise.resolve(vscode.commands.executeCommand<string | undefined>('fisk.search', query));
    await waitFor(`the picker to list results for "${query}"`, () => views.some((v) => v.query === query && v.active !== undefined));
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    return await result;
  } finally {
    sub.dispose();
  }
}

/** Runs `command`, accepting the first row of the QuickPick it shows; resolves with the command's result. */
async function acceptFirst(command: string, ...args: unknown[]): Promise<string | undefined> {
  let done = false;
  const result = Promise.resolve(vscode.commands.executeCommand<string | undefined>(command, ...args)).finally(() => (done = true));
  await waitFor('the picker to accept a result', async () => {
    if (!done) {
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      await new Promise((r) => setTimeout(r, 150));
    }
    return done;
  });
  return result;
}

/** The editor shows `link`'s file with `range` selected (default: the whole cited chunk). */
function assertShowsLocation(link: LocationLink, range = link.targetRange): void {
  const editor = vscode.window.activeTextEditor;
  assert.ok(editor, 'an editor is active');
  assert.equal(editor.document.uri.toString(), vscode.Uri.parse(link.targetUri).toString());
  const first = range.start.line;
  const last = range.end.character === 0 && range.end.line > first ? range.end.line - 1 : range.end.line;
  assert.deepEqual([editor.selection.active.line, editor.selection.active.character], [first, range.start.character], 'cursor at the start');
  assert.equal(editor.selection.start.line, first);
  assert.equal(editor.selection.end.line, Math.min(last, editor.document.lineCount - 1), 'selection ends on the last cited line');
}

test('the extension activates, starts fisk-ls and contributes its commands', async () => {
  const extension = vscode.extensions.getExtension<FiskApi>(EXTENSION_ID);
  assert.ok(extension, `${EXTENSION_ID} is installed`);
  api = await extension.activate();
  await waitFor('the server to run', () => api.serverState.kind === 'running' || (api.serverState.kind !== 'starting' && api.serverState.kind !== 'stopped' && fail(api.serverState)));
  const commands = await vscode.commands.getCommands(true);
  for (const c of extension.packageJSON.contributes.commands as { command: string }[]) {
    assert.ok(commands.includes(c.command), `${c.command} is registered`);
  }
}, 60000);

function fail(state: unknown): never {
  throw new Error(`server state ${JSON.stringify(state)}`);
}

/** Runs `action` (a settings change) and waits until the server has restarted and reached `kind`. */
async function afterRestart(action: () => Thenable<unknown>, kind: 'running' | 'missing'): Promise<void> {
  let restarted = false;
  const sub = api.onDidChangeServerState((state) => {
    restarted ||= state.kind === 'starting';
  });
  try {
    await action();
    await waitFor(`a restart ending in ${kind}`, () => restarted && api.serverState.kind === kind, 30000);
  } finally {
    sub.dispose();
  }
}

test('the status bar shows the tier and the indexed documents', async () => {
  const view = await waitFor('the tier in the status bar', () => {
    const v = api.statusBar.snapshot();
    return /Fisk: (lexical|hybrid|degraded)/.test(v.text) && v.tooltip.includes(`${FIXTURE_FILES} documents`) && v;
  }, 40000);
  assert.match(view.tooltip, new RegExp(`${root().fsPath}: ${FIXTURE_FILES} documents, \\d+ chunks`));
});

test('search returns hits whose locations are in the workspace', async () => {
  const result = await api.search('install pip virtual environment');
  assert.equal(result.status, 'ok');
  assert.equal(typeof result.degraded, 'boolean');
  assert.ok(result.results.length > 0, 'at least one hit');
  const top = result.results[0];
  assert.match(top.citation, /^docs\/install\.md#\d+$/);
  assert.equal(vscode.Uri.parse(top.location.targetUri).fsPath, path.join(root().fsPath, 'docs/install.md'));
  for (const hit of result.results) {
    assert.ok(hit.score >= 0 && hit.score <= 1, `score ${hit.score} in [0, 1]`);
    assert.ok(hit.section.length > 0);
  }
});

test('Fisk: Search Knowledge opens the first hit and selects its lines', async () => {
  const expected = (await api.search('alert threshold congestion')).results[0];
  assert.ok(expected, 'the query has a hit');
  const citation = await searchAndAccept('alert threshold congestion');
  assert.equal(citation, expected.citation);
  // A hit opens on the part of the chunk that matched (docs/lsp-protocol.md: select targetSelectionRange).
  assertShowsLocation(expected.location, expected.location.targetSelectionRange);
}, 40000);

/** Collects the search picker's views while `body` runs. */
async function watchingPicker<T>(body: (views: PickerView[]) => Promise<T>): Promise<T> {
  const views: PickerView[] = [];
  const sub = api.searchPicker.onDidChange((view) => views.push(view));
  try {
    return await body(views);
  } finally {
    sub.dispose();
  }
}

/** The first view after the `after`th with a row active that `match` accepts. */
function nextView(views: PickerView[], after: number, what: string, match: (v: PickerView) => boolean): Promise<PickerView> {
  return waitFor(what, () => views.slice(after).find((v) => v.active !== undefined && match(v)));
}

test('Search in Folder… keeps the search to the folder; the scope button widens it to the workspace and back', async () => {
  const releases = vscode.Uri.joinPath(root(), 'docs/releases');
  const query = 'Lighthouse';
  const scoped = (await api.search(query, undefined, undefined, [releases.fsPath])).results.map((r) => r.citation);
  assert.ok(scoped.length > 0 && scoped.every((c) => c.startsWith('docs/releases/')), `scoped hits: ${scoped.join(', ')}`);
  const whole = (await api.search(query)).results.map((r) => r.citation);
  assert.ok(whole.some((c) => !c.startsWith('docs/releases/')), `unscoped, other files rank too: ${whole.join(', ')}`);
  // The explorer's context menu runs the command with the folder's Uri; the query is the editor's selection.
  const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(vscode.Uri.joinPath(root(), 'docs/install.md')));
  editor.selection = new vscode.Selection(2, 0, 2, query.length);
  assert.equal(editor.document.getText(editor.selection), query);
  await watchingPicker(async (views) => {
    const picked = Promise.resolve(vscode.commands.executeCommand<string | undefined>('fisk.searchInFolder', releases));
    const first = await nextView(views, 0, 'the list kept to docs/releases', () => true);
    assert.deepEqual([first.query, first.paths, first.citations], [query, [releases.fsPath], scoped]);
    assert.match(first.title, /^Fisk: Search Knowledge in docs\/releases — /);
    assert.equal(first.placeholder, 'Search the docs in docs/releases (tag:NAME keeps to tagged pages)');
    await vscode.commands.executeCommand('fisk.toggleSearchScope');
    const wide = await nextView(views, views.indexOf(first) + 1, 'the whole workspace', (v) => v.paths.length === 0);
    assert.deepEqual(wide.citations, whole);
    assert.equal(wide.placeholder, 'Search the workspace docs (tag:NAME keeps to tagged pages)');
    assert.match(wide.title, /^Fisk: Search Knowledge — /);
    await vscode.commands.executeCommand('fisk.toggleSearchScope');
    const narrow = await nextView(views, views.indexOf(wide) + 1, 'docs/releases again', (v) => v.paths.length === 1);
    assert.deepEqual(narrow.citations, scoped);
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    assert.equal(await picked, scoped[0]);
  });
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
}, 40000);

test('Fisk: Search Knowledge offers the active file\'s folder as its scope', async () => {
  const file = vscode.Uri.joinPath(root(), 'docs/releases/2.1/upgrading.md');
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(file));
  const folder = path.dirname(file.fsPath);
  await watchingPicker(async (views) => {
    const picked = Promise.resolve(vscode.commands.executeCommand<string | undefined>('fisk.search', 'Lighthouse'));
    const first = await nextView(views, 0, 'the workspace list', () => true);
    assert.deepEqual(first.paths, [], 'the picker starts on the whole workspace');
    await vscode.commands.executeCommand('fisk.toggleSearchScope');
    const here = await nextView(views, views.indexOf(first) + 1, 'the file\'s folder', (v) => v.paths.length === 1);
    assert.deepEqual(here.paths, [folder]);
    assert.equal(here.placeholder, 'Search the docs in docs/releases/2.1 (tag:NAME keeps to tagged pages)');
    assert.ok(here.citations.length > 0 && here.citations.every((c) => c.startsWith('docs/releases/2.1/')), here.citations.join(', '));
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    assert.equal(await picked, here.active);
  });
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
}, 40000);

test('a hit lands on the paragraph that matched, with its words highlighted; its copies open on the same lines', async () => {
  // docs/releases/2.{0,1,2}/upgrading.md: three copies of a page; the words are in the 4th paragraph of its section.
  const query = 'drain the radar relay';
  const expected = (await api.search(query)).results[0];
  assert.match(expected.citation, /^docs\/releases\/2\.[012]\/upgrading\.md#0$/);
  assert.equal(expected.section, 'Upgrading Lighthouse > Before you upgrade');
  const lines = fs.readFileSync(vscode.Uri.parse(expected.location.targetUri).fsPath, 'utf8').split('\n');
  const paragraph = lines.findIndex((line) => line.startsWith('Drain the radar relay'));
  const selected = expected.location.targetSelectionRange;
  assert.deepEqual([selected.start.line, selected.end.line], [paragraph, paragraph + 3], 'the three lines of the paragraph');
  const words = (expected.highlights ?? []).map(([a, b]) => Array.from(expected.snippet).slice(a, b).join('').toLowerCase());
  assert.deepEqual([...new Set(words)].sort(), ['drain', 'radar', 'relay']);

  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  assert.equal(await searchAndAccept(query), expected.citation);
  assertShowsLocation(expected.location, selected);
  const editor = vscode.window.activeTextEditor;
  assert.ok(editor?.visibleRanges.some((r) => r.contains(editor.selection)), 'the matched lines are on screen');

  const also = expected.copies ?? [];
  assert.deepEqual(
    [expected.citation, ...also.map((a) => a.citation)].sort(),
    ['2.0', '2.1', '2.2'].map((v) => `docs/releases/${v}/upgrading.md#0`),
    'one result for the three copies; also names the other two',
  );
  assert.equal(await acceptFirst('fisk.openAlso', expected), also[0].citation);
  assertShowsLocation(also[0].location, also[0].location.targetSelectionRange);
  assert.ok(vscode.window.activeTextEditor?.document.lineAt(also[0].location.targetSelectionRange.start.line).text.startsWith('Drain the radar relay'));
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
}, 40000);

test('a hit puts the cursor on the matched word, after the text before it on its line (UTF-16 columns)', async () => {
  // docs/troubleshooting.md: "Après 🛰 storms, the kittiwake relay …"; the satellite is 2 UTF-16 code units, 1 code point.
  const expected = (await api.search('kittiwake')).results[0];
  assert.match(expected?.citation ?? '', /^docs\/troubleshooting\.md#\d+$/);
  const lines = fs.readFileSync(vscode.Uri.parse(expected.location.targetUri).fsPath, 'utf8').split('\n');
  const line = lines.findIndex((text) => text.includes('kittiwake'));
  const character = lines[line].indexOf('kittiwake');
  assert.ok(character > 0, 'the fixture line has text before the word');
  assert.deepEqual(expected.location.targetSelectionRange.start, { line, character }, 'the server counts UTF-16 code units with VS Code');

  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  assert.equal(await searchAndAccept('kittiwake'), expected.citation);
  const editor = vscode.window.activeTextEditor;
  assert.ok(editor, 'an editor is active');
  assert.equal(editor.document.uri.toString(), vscode.Uri.parse(expected.location.targetUri).toString());
  assert.deepEqual([editor.selection.active.line, editor.selection.active.character], [line, character], 'the cursor is on "kittiwake"');
  assert.equal(editor.document.getText(editor.document.getWordRangeAtPosition(editor.selection.active)), 'kittiwake');
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
}, 40000);

test('Fisk: Open Citation opens the cited lines; an unknown citation opens nothing', async () => {
  const hit = (await api.search('tide tables csv')).results[0];
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  const shown = await vscode.commands.executeCommand<ShowResult>('fisk.openCitation', hit.citation);
  assert.equal(shown?.citation, hit.citation);
  assert.equal(shown?.stale, false);
  assert.match(shown?.content ?? '', /tide/i);
  assertShowsLocation(shown.location);
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  assert.equal(await vscode.commands.executeCommand('fisk.openCitation', 'docs/nowhere.md#99'), undefined);
  assert.equal(vscode.window.activeTextEditor, undefined);
  await assert.rejects(api.show('docs/nowhere.md#99'), /no chunk|nowhere/i);
});

test('Fisk: Show Index Status returns the roots and counts', async () => {
  const status = await vscode.commands.executeCommand<IndexStatus>('fisk.showStatus');
  assert.ok(status, 'a status');
  assert.equal(status.roots.length, 1);
  assert.equal(status.roots[0].documents, FIXTURE_FILES);
  assert.ok(status.roots[0].chunks >= FIXTURE_FILES);
  assert.match(status.tier, /lexical|hybrid|degraded/i);
});

test('Fisk: Reindex Workspace picks up a new file and the status bar follows', async () => {
  const views: string[] = [];
  const sub = api.statusBar.onDidChange((v) => views.push(v.tooltip));
  try {
    fs.writeFileSync(path.join(root().fsPath, 'docs/zanzibar.md'), '# Zanzibar ferries\n\nThe zanzibar ferry leaves at dawn.\n');
    const result = await vscode.commands.executeCommand<ReindexResult>('fisk.reindex');
    assert.ok(result, 'a reindex result');
    assert.equal(result.files, FIXTURE_FILES + 1);
    await waitFor('the status bar to count the new file', () => api.statusBar.snapshot().tooltip.includes(`${FIXTURE_FILES + 1} documents`));
    assert.ok(views.some((t) => t.includes(`${FIXTURE_FILES + 1} documents`)), 'a change event carried the new count');
    const found = await api.search('zanzibar ferry');
    assert.equal(found.results[0]?.citation.startsWith('docs/zanzibar.md#'), true);
  } finally {
    sub.dispose();
  }
}, 40000);

test('Fisk: Rebuild Index rebuilds everything', async () => {
  const result = await vscode.commands.executeCommand<ReindexResult>('fisk.rebuild');
  assert.ok(result, 'a rebuild result');
  assert.equal(result.files, FIXTURE_FILES + 1);
  assert.ok(result.chunks > 0);
  assert.equal((await api.search('zanzibar')).status, 'ok');
}, 60000);

test('a citation in a document is a link, with hover and go to definition', async () => {
  const hit = (await api.search('alert threshold congestion')).results[0];
  const notes = vscode.Uri.joinPath(root(), 'notes.md');
  fs.writeFileSync(notes.fsPath, `# Notes\n\nThe limit is explained in ${hit.citation} today.\n`);
  const document = await vscode.workspace.openTextDocument(notes);
  await vscode.window.showTextDocument(document);
  const at = new vscode.Position(2, 'The limit is explained in '.length + 3);
  const links = await waitFor('a document link', async () => {
    const found = await vscode.commands.executeCommand<vscode.DocumentLink[]>('vscode.executeLinkProvider', notes);
    return found?.length ? found : undefined;
  });
  assert.equal(document.getText(links[0].range), hit.citation);
  const definitions = await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[]>('vscode.executeDefinitionProvider', notes, at);
  const target = definitions[0];
  assert.ok(target, 'a definition');
  assert.equal(('targetUri' in target ? target.targetUri : target.uri).toString(), vscode.Uri.parse(hit.location.targetUri).toString());
  const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', notes, at);
  const text = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
  assert.match(text, /Alert thresholds/);
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  fs.rmSync(notes.fsPath);
});

test('the client serves markdown and plain text only, unless fisk.languages adds a language', async () => {
  const hit = (await api.search('alert threshold congestion')).results[0];
  const code = vscode.Uri.joinPath(root(), 'notes.py');
  fs.writeFileSync(code.fsPath, `# see ${hit.citation}\nx = 1\n`);
  const links = async () => (await vscode.commands.executeCommand<vscode.DocumentLink[]>('vscode.executeLinkProvider', code)) ?? [];
  const config = vscode.workspace.getConfiguration('fisk');
  let changed = false;
  try {
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(code));
    // The running client's selector is fixed at its start: no link provider for python documents.
    assert.deepEqual(await links(), [], 'no citation links in a python file');
    changed = true;
    await afterRestart(() => config.update('languages', ['markdown', 'plaintext', 'python'], vscode.ConfigurationTarget.Workspace), 'running');
    const found = await waitFor('a citation link in the python file', async () => {
      const l = await links();
      return l.length > 0 && l;
    });
    assert.equal((await vscode.workspace.openTextDocument(code)).getText(found[0].range), hit.citation);
  } finally {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    if (changed) {
      await afterRestart(() => config.update('languages', undefined, vscode.ConfigurationTarget.Workspace), 'running');
    }
    fs.rmSync(code.fsPath);
  }
}, 90000);

test('a restarted server reports indexing progress in the status bar', async () => {
  const texts: string[] = [];
  const sub = api.statusBar.onDidChange((v) => texts.push(v.text));
  try {
    await vscode.commands.executeCommand('fisk.restartServer');
    await waitFor('the tier after the restart', () => api.serverState.kind === 'running' && /Fisk: (lexical|hybrid|degraded)/.test(api.statusBar.snapshot().text), 40000);
    assert.ok(texts.includes('$(sync~spin) Fisk'), `starting was shown: ${JSON.stringify(texts)}`);
    assert.ok(texts.some((t) => /^\$\(sync~spin\) Fisk: /.test(t)), `indexing progress was shown: ${JSON.stringify(texts)}`);
  } finally {
    sub.dispose();
  }
}, 60000);

test('the fisk.topK setting limits the results', async () => {
  const config = vscode.workspace.getConfiguration('fisk');
  await afterRestart(() => config.update('topK', 1, vscode.ConfigurationTarget.Workspace), 'running');
  try {
    assert.equal((await api.search('lighthouse')).results.length, 1);
  } finally {
    await afterRestart(() => config.update('topK', undefined, vscode.ConfigurationTarget.Workspace), 'running');
  }
  assert.ok((await api.search('lighthouse')).results.length > 1);
}, 90000);

test('fisk.topK outside the server limit reaches the server, which keeps its default and names it in its one message; a request outside it is an error', async () => {
  const config = vscode.workspace.getConfiguration('fisk');
  const messages: string[] = [];
  const sub = api.onDidShowServerMessage((m) => messages.push(m.message));
  await afterRestart(() => config.update('topK', 30, vscode.ConfigurationTarget.Workspace), 'running');
  try {
    const result = await api.search('lighthouse');
    assert.equal(result.status, 'ok', 'the search is not refused');
    assert.ok(result.results.length > 0 && result.results.length <= 5, `the default 5 applies: ${result.results.length}`);
    await waitFor('the server\'s settings message', () => messages.some((m) => m.includes('fisk.topK')), 20000);
    assert.deepEqual(
      messages.filter((m) => m.includes('invalid settings')),
      ['fisk: ignoring invalid settings, using defaults for: fisk.topK (expected an integer from 1 to 20, got 30)'],
      'one message, the server\'s words',
    );
    await assert.rejects(api.search('lighthouse', 30), /topK: expected an integer from 1 to 20, got 30/);
  } finally {
    sub.dispose();
    await afterRestart(() => config.update('topK', undefined, vscode.ConfigurationTarget.Workspace), 'running');
  }
}, 90000);

test('the language model tool answers with citations', async () => {
  const lm = (vscode as unknown as { lm: { tools: readonly { name: string }[]; invokeTool(name: string, options: object): Thenable<{ content: unknown[] }> } }).lm;
  assert.ok(lm.tools.some((t) => t.name === 'fisk_knowledge_search'), 'fisk_knowledge_search is registered');
  const result = await lm.invokeTool('fisk_knowledge_search', { input: { query: 'radar feed buffered' }, toolInvocationToken: undefined });
  const text = result.content.map((part) => (part as { value?: string }).value ?? '').join('');
  assert.match(text, /docs\/troubleshooting\.md#\d+/);
});

/**
 * Runs Fisk: Search Knowledge with `question`, waits until the picker reports a view that `done`
 * accepts (the expansion's outcome reached the workbench), accepts the active row; resolves with
 * that view, the accepted citation and the searches sent ({expand, expansion, citations}).
 */
async function searchExpanding(question: string, done: (view: PickerView, searches: { expand?: boolean; citations: string[] }[]) => boolean) {
  const searches: { expand?: boolean; expansion?: string; citations: string[]; error?: string }[] = [];
  const sub = api.onDidSearch((e) =>
    searches.push({
      expand: e.args.expand,
      expansion: e.result?.expansion,
      citations: e.result?.results.map((r) => r.citation) ?? [],
      error: e.error ? String(e.error) : undefined,
    }),
  );
  const views: PickerView[] = [];
  const viewSub = api.searchPicker.onDidChange((view) => views.push(view));
  try {
    const picked = Promise.resolve(vscode.commands.executeCommand<string | undefined>('fisk.search', question));
    const view = await waitFor(`the picker's expanded list for "${question}"`, () => views.find((v) => v.query === question && done(v, searches)), 40000);
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    return { view, citation: await picked, searches };
  } finally {
    sub.dispose();
    viewSub.dispose();
  }
}

/**
 * Runs `body` with fisk.expansion.provider back at its default (editor: the run's workspace
 * settings turn expansion off for the other tests), then turns it off again.
 */
async function withDefaultExpansion(body: () => Promise<void>): Promise<void> {
  const config = vscode.workspace.getConfiguration('fisk');
  await afterRestart(() => config.update('expansion.provider', undefined, vscode.ConfigurationTarget.Workspace), 'running');
  try {
    await body();
  } finally {
    await afterRestart(() => config.update('expansion.provider', 'none', vscode.ConfigurationTarget.Workspace), 'running');
  }
}

test('question expansion (provider editor, the default): the server asks the chat model through fisk/expand and the picker refines its rows in place', async () => {
  const provider = vscode.extensions.getExtension<{ requests: string[] }>('fisk-test.fisk-test-lm-provider');
  assert.ok(provider, 'the test chat model provider is loaded');
  const { requests } = await provider.activate();
  const models = await vscode.lm.selectChatModels();
  assert.ok(models.some((m) => m.id === 'fisk-test-model'), `the test model is offered: ${models.map((m) => m.id).join(', ')}`);
  const question = 'why are my notifications held back at night?';
  await withDefaultExpansion(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const before = requests.length;
    // The workbench first makes the refined list's first row active, then the row the extension
    // keeps: wait for the row it keeps (the plain top hit when still listed, else the first row).
    const kept = (searches: { citations: string[] }[]) =>
      searches[1]?.citations.includes(searches[0].citations[0]) ? searches[0].citations[0] : searches[1]?.citations[0];
    const first = await searchExpanding(question, (v, searches) => v.refined && v.active === kept(searches));
    assert.equal(requests.length - before, 1, 'one request to the model');
    assert.ok(requests[before].includes(question), 'the prompt carries the question');
    assert.deepEqual(
      first.searches.map((s) => [s.expand, s.expansion]),
      [[undefined, 'off'], [true, 'used']],
      `the plain search, then expand: true (${JSON.stringify(first.searches)})`,
    );
    const [plain, refined] = first.searches;
    assert.ok(refined.citations.some((c) => /^docs\/configuration\.md#/.test(c)), `the strings find the quiet-hours section: ${refined.citations}`);
    assert.deepEqual(first.view.citations, refined.citations, 'the refined rows replaced the plain ones');
    assert.equal(first.view.active, kept([plain, refined]), 'the active row stayed on its citation (else the first row)');
    assert.equal(first.citation, first.view.active, 'the accepted row is the active row of the refined list');
    assert.match(first.view.title, /· expanded by the language model$/);

    const again = await searchExpanding(question, (v, searches) => v.refined && v.active === kept(searches));
    assert.equal(requests.length - before, 1, 'the same question again: no second model request');
    assert.equal(again.searches[1].expansion, 'cached');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
}, 120000);

test('question expansion: a model that fails keeps the plain rows, and the title says why', async () => {
  const question = 'why does the radar refuse to buffer the feed?';
  await withDefaultExpansion(async () => {
    const { view, citation, searches } = await searchExpanding(question, (v) => v.expansion?.startsWith('failed: ') === true);
    assert.deepEqual(searches.map((s) => s.expand), [undefined, true]);
    assert.equal(view.refined, false);
    assert.deepEqual(view.citations, searches[0].citations, 'the plain rows stayed');
    assert.match(view.title, /· not expanded \(.*declines.*\)$/);
    assert.equal(citation, view.active);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
}, 120000);

test('the language model tool never asks for expansion', async () => {
  const seen: (boolean | undefined)[] = [];
  const sub = api.onDidSearch((e) => seen.push(e.args.expand));
  try {
    await withDefaultExpansion(async () => {
      const lm = vscode.lm as unknown as { invokeTool(name: string, options: object): Thenable<unknown> };
      await lm.invokeTool('fisk_knowledge_search', { input: { query: 'why are my notifications held back at night?' }, toolInvocationToken: undefined });
    });
    assert.deepEqual(seen, [undefined]);
  } finally {
    sub.dispose();
  }
}, 90000);

test('a server command that is not installed is reported with the install command', async () => {
  const config = vscode.workspace.getConfiguration('fisk');
  const original = config.inspect<string>('server.command')?.workspaceValue;
  await afterRestart(() => config.update('server.command', '/nonexistent/fisk-ls', vscode.ConfigurationTarget.Workspace), 'missing');
  try {
    assert.deepEqual(api.serverState, { kind: 'missing', command: '/nonexistent/fisk-ls' });
    assert.match(api.statusBar.snapshot().tooltip, /`pipx install --force \.` in a checkout of the fisk-ls repository/);
    await assert.rejects(api.search('lighthouse'), /not found\. Install it with `pipx install --force \.` in a checkout of the fisk-ls repository \(`pipx install fisk-ls` once it is published\)/);
  } finally {
    await afterRestart(() => config.update('server.command', original, vscode.ConfigurationTarget.Workspace), 'running');
  }
}, 90000);

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A loopback OpenAI-compatible embeddings API: bag-of-words hashed into 16 dimensions. */
async function fakeEmbeddings(): Promise<{ url: string; close(): Promise<void> }> {
  const vector = (text: string) => {
    const v = new Array<number>(16).fill(0.01);
    for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
      v[[...word].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 16, 7)] += 1;
    }
    return v;
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const input = (JSON.parse(body) as { input: string | string[] }).input;
      const inputs = Array.isArray(input) ? input : [input];
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ object: 'list', model: 'fake', data: inputs.map((t, index) => ({ object: 'embedding', index, embedding: vector(t) })) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Opens `command` with `query` and resolves with the first picker view that lists it with a row active. */
async function openPicker(views: PickerView[], query: string, command = 'fisk.search'): Promise<{ view: PickerView; done: Promise<string | undefined> }> {
  const after = views.length;
  const done = Promise.resolve(vscode.commands.executeCommand<string | undefined>(command, query));
  const view = await nextView(views, after, `the picker to list "${query}"`, (v) => v.query === query && v.active !== undefined);
  return { view, done };
}

/** The tabs open in the editor area, as URIs (text editors only). */
function openTabs(): string[] {
  return vscode.window.tabGroups.all.flatMap((g) => g.tabs).flatMap((t) => (t.input instanceof vscode.TabInputText ? [t.input.uri.toString()] : []));
}

test("the picker lists the server's results in the server's order, with plain snippets, and more results up to the limit", async () => {
  // "lighthouse": some sections are labelled "Lighthouse …" and some are not; a picker sorting rows
  // whose label matches the typed words would move the labelled ones to the top.
  const query = 'lighthouse';
  assert.ok((await api.search(query, 20)).results.length >= 6, `more than a page of hits for "${query}"`);
  const server = await api.search(query);
  const matches = server.results.map((r) => /lighthouse/i.test(r.section));
  assert.ok(matches.some((m, j) => m && matches.slice(0, j).includes(false)), `a row whose label matches comes after one whose label does not: ${server.results.map((r) => r.section).join(' | ')}`);
  await watchingPicker(async (views) => {
    const { view, done } = await openPicker(views, query);
    assert.deepEqual(view.citations, server.results.map((r) => r.citation), "the server's order");
    assert.ok(view.details.every((d) => !/[«»]/.test(d)), 'no marks in the details');
    assert.equal(view.more, true, 'a full page offers more');
    // Down to the "more results" row (after the hits) and accept it: the picker stays open.
    for (let i = 0; i < view.citations.length; i++) {
      await vscode.commands.executeCommand('workbench.action.quickOpenSelectNext');
    }
    const after = views.length;
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    const more = await nextView(views, after, 'the longer list', (v) => v.query === query && v.topK !== undefined);
    const longer = await api.search(query, more.topK);
    assert.deepEqual(more.citations, longer.results.map((r) => r.citation), "the longer list is the server's too");
    assert.ok(more.citations.length > view.citations.length);
    await nextView(views, after, 'the first new row active', (v) => v.topK !== undefined && v.active === more.citations[view.citations.length]);
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    await done;
  });
}, 60000);

test('moving through the picker previews each row in one preview tab; closing it brings the editor back', async () => {
  const readme = await vscode.window.showTextDocument(vscode.Uri.joinPath(root(), 'README.md'), { preview: false });
  const before = openTabs();
  const query = 'radar relay';
  const server = await api.search(query);
  const files = new Set(server.results.map((r) => r.location.targetUri));
  assert.ok(files.size >= 2, 'hits in two files at least');
  await watchingPicker(async (views) => {
    const { view, done } = await openPicker(views, query);
    const shows = (citation: string) => {
      const hit = server.results.find((r) => r.citation === citation);
      const editor = vscode.window.activeTextEditor;
      return hit !== undefined && editor?.document.uri.toString() === vscode.Uri.parse(hit.location.targetUri).toString() &&
        editor.selection.start.line === hit.location.targetSelectionRange.start.line;
    };
    await waitFor(`a preview of ${view.active}`, () => shows(view.active ?? ''));
    for (let i = 1; i < server.results.length; i++) {
      const after = views.length;
      await vscode.commands.executeCommand('workbench.action.quickOpenSelectNext');
      const moved = await nextView(views, after, 'the next row', (v) => v.active === server.results[i].citation);
      await waitFor(`a preview of ${moved.active}`, () => shows(moved.active ?? ''));
      const added = openTabs().filter((t) => !before.includes(t));
      assert.ok(added.length <= 1, `one preview tab at most, got ${added.join(', ')}`);
    }
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    await done;
  });
  await waitFor('the README back in front', () => vscode.window.activeTextEditor?.document.uri.toString() === readme.document.uri.toString());
  await waitFor('the preview tab closed', () => openTabs().filter((t) => !before.includes(t)).length === 0);
}, 60000);

test('tag:NAME in the picker keeps the search to pages whose front matter lists the tag', async () => {
  const file = path.join(root().fsPath, 'docs', 'drills.md');
  fs.writeFileSync(file, '---\ntags: [harbour-ops]\n---\n# Drills\n\n## Relay drill\n\nEvery month the radar relay is drained and restarted as a drill.\n');
  try {
    await waitFor('the tagged page indexed', async () => (await api.search('radar relay drill', 20, undefined, undefined, ['harbour-ops'])).results.length > 0, 30000);
    const all = await api.search('radar relay');
    assert.ok(all.results.some((r) => !r.citation.startsWith('docs/drills.md')), 'other pages match without the tag');
    await watchingPicker(async (views) => {
      const { view, done } = await openPicker(views, 'tag:harbour-ops radar relay');
      assert.deepEqual(view.tags, ['harbour-ops']);
      assert.ok(view.citations.length > 0 && view.citations.every((c) => c.startsWith('docs/drills.md#')), view.citations.join(', '));
      assert.match(view.title, /\[tag:harbour-ops\]/);
      await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
      await done;
    });
  } finally {
    fs.rmSync(file, { force: true });
    await waitFor('the tagged page gone', async () => !(await api.search('radar relay drill')).results.some((r) => r.citation.startsWith('docs/drills.md')), 30000);
  }
}, 90000);

test('Search Knowledge (keep results) keeps the ranked list in the Fisk Results view', async () => {
  const query = 'alert threshold';
  const server = await api.search(query);
  await watchingPicker(async (views) => {
    const { view, done } = await openPicker(views, query, 'fisk.searchKeep');
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    assert.equal(await done, view.active);
  });
  const kept = api.results.current();
  assert.ok(kept, 'a list is kept');
  assert.equal(kept.query, query);
  assert.deepEqual(kept.result.results.map((r) => r.citation), server.results.map((r) => r.citation));
  await vscode.commands.executeCommand('fisk.clearResults');
  assert.equal(api.results.current(), undefined);
}, 40000);

test('hybrid search reports degraded, with the reason, when the embeddings API goes away', async () => {
  const embeddings = await fakeEmbeddings();
  const config = vscode.workspace.getConfiguration('fisk');
  try {
    await config.update('embeddings.model', 'fake', vscode.ConfigurationTarget.Workspace);
    await afterRestart(() => config.update('embeddings.baseUrl', embeddings.url, vscode.ConfigurationTarget.Workspace), 'running');
    await waitFor('the hybrid tier', async () => /^hybrid/i.test((await api.status())?.tier ?? ''), 30000);
    const rebuilt = await vscode.commands.executeCommand<ReindexResult>('fisk.rebuild');
    assert.ok(rebuilt && rebuilt.chunks > 0, 'the index was rebuilt with vectors');
    const hybrid = await api.search('tide heights in metres');
    assert.equal(hybrid.degraded, false);
    const covered = await waitFor('every chunk embedded (or a server without coverage)', async () => {
      const root = (await api.status())?.roots[0];
      return root !== undefined && (root.vectors === undefined || (root.vectors !== null && root.vectors.embedded === root.vectors.chunks)) && root;
    }, 30000);
    if (covered.vectors === undefined) {
      note('skipped the coverage check: this fisk-ls reports no vector coverage (roots[].vectors)');
    } else {
      assert.equal(covered.vectors?.chunks, covered.chunks, 'vectors.chunks is the root\'s chunk count');
      const n = covered.chunks;
      await waitFor('the coverage in the tooltip', () => api.statusBar.snapshot().tooltip.includes(`${n} chunks, ${n}/${n} embedded`));
      assert.equal(api.statusBar.snapshot().text, '$(book) Fisk: hybrid', 'no coverage in the item once complete');
    }
    assert.match(hybrid.tier, /^hybrid/i);
    assert.ok(hybrid.results.some((r) => r.citation.startsWith('docs/configuration.md#')), 'the tide section is found');
    await embeddings.close();
    const degraded = await api.search('tide heights in metres');
    assert.equal(degraded.degraded, true);
    assert.ok(degraded.reason, 'a reason is given');
    assert.match(degraded.tier, /^degraded/i);
    assert.ok(degraded.results.length > 0, 'lexical results still come back');
    assert.equal(api.statusBar.snapshot().text, '$(warning) Fisk: degraded');
    assert.match(api.statusBar.snapshot().tooltip, new RegExp(escape(degraded.reason)));
  } finally {
    await embeddings.close().catch(() => undefined);
    await config.update('embeddings.baseUrl', undefined, vscode.ConfigurationTarget.Workspace);
    await config.update('embeddings.model', undefined, vscode.ConfigurationTarget.Workspace);
  }
}, 90000);

export function run(): Promise<void> {
  return runAll();
}
