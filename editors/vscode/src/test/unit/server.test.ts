import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { beforeEach, test } from 'node:test';
import { FakeLanguageClient, State } from './mock/languageclient';
import { mock, window } from './mock/vscode';
import { fakeServerExecutable, flush, reset } from './helpers';
import { ServerNotRunningError } from '../../common/protocol';
import { answerConfiguration, FiskServer } from '../../common/server';

beforeEach(reset);

function newServer(): FiskServer {
  return new FiskServer(window.createOutputChannel('Fisk', { log: true }) as never);
}

test('a missing server says how to install it, and requests fail with that reason', async () => {
  mock.settings['fisk.server.command'] = '/nonexistent/fisk-ls';
  mock.messageAnswer = 'Copy Install Command';
  const server = newServer();
  await server.restart();
  assert.deepEqual(server.state, { kind: 'missing', command: '/nonexistent/fisk-ls' });
  assert.equal(FakeLanguageClient.instances.length, 0);
  assert.equal(mock.messages[0].level, 'error');
  assert.match(mock.messages[0].text, /"\/nonexistent\/fisk-ls" was not found\. Install it with `pipx install --force \.` in a checkout of the fisk-ls repository/);
  assert.deepEqual(mock.messages[0].actions, ['Copy Install Command', 'Open Settings']);
  await flush();
  assert.equal(mock.clipboard, 'pipx install --force .');
  await assert.rejects(server.request('fisk.knowledge.status'), (e: unknown) => e instanceof ServerNotRunningError && e.state === 'missing');
});

test('the default command is looked up on PATH and started over stdio', async () => {
  const file = fakeServerExecutable();
  const savedPath = process.env.PATH;
  process.env.PATH = path.dirname(file);
  try {
    mock.settings['fisk.server.args'] = ['--log-file', '/tmp/x.log'];
    const server = newServer();
    await server.restart();
    const client = FakeLanguageClient.instances[0];
    assert.equal(client.serverOptions.command, file);
    assert.deepEqual(client.serverOptions.args, ['--log-file', '/tmp/x.log']);
    assert.equal(client.serverOptions.transport, undefined, 'stdio without an extra --stdio argument');
    assert.equal(client.id, 'fisk');
    assert.deepEqual(server.state, { kind: 'running' });
  } finally {
    process.env.PATH = savedPath;
  }
});

test('settings go out as initializationOptions; markdown and plain text files are served', async () => {
  mock.settings['fisk.server.command'] = fakeServerExecutable();
  mock.settings['fisk.paths'] = ['docs'];
  mock.settings['fisk.topK'] = 3;
  await newServer().restart();
  const options = FakeLanguageClient.instances[0].clientOptions;
  assert.deepEqual(options.initializationOptions, { paths: ['docs'], topK: 3, expansion: { provider: 'editor' }, workspaceSymbols: false });
  assert.deepEqual(options.documentSelector, [
    { scheme: 'file', language: 'markdown' },
    { scheme: 'file', language: 'plaintext' },
  ]);
  assert.deepEqual(mock.messages, [], 'no warning for valid settings');
});

test('fisk.languages sets the document selector', async () => {
  mock.settings['fisk.server.command'] = fakeServerExecutable();
  mock.settings['fisk.languages'] = ['restructuredtext'];
  await newServer().restart();
  assert.deepEqual(FakeLanguageClient.instances[0].clientOptions.documentSelector, [{ scheme: 'file', language: 'restructuredtext' }]);
});

test("a bad server setting goes to the server as set, with no warning of the extension's (the server names it)", async () => {
  mock.settings['fisk.server.command'] = fakeServerExecutable();
  mock.settings['fisk.topK'] = 30;
  const server = newServer();
  await server.restart();
  assert.equal(FakeLanguageClient.instances[0].clientOptions.initializationOptions.topK, 30);
  const [answer] = answerConfiguration({ items: [{ section: 'fisk', scopeUri: 'file:///ws' }] }, [null]) as { topK?: unknown }[];
  assert.equal(answer.topK, 30, 'workspace/configuration answers the same');
  assert.deepEqual(mock.messages, []);
});

test("the server's window/showMessage is shown as the server wrote it, and told to the API", async () => {
  mock.settings['fisk.server.command'] = fakeServerExecutable();
  const server = newServer();
  const seen: unknown[] = [];
  server.onDidShowMessage((m) => seen.push(m));
  await server.restart();
  const message = 'fisk: ignoring invalid settings, using defaults for: fisk.topK (expected an integer from 1 to 20, got 30)';
  FakeLanguageClient.instances[0].serverNotification('window/showMessage', { type: 2, message });
  FakeLanguageClient.instances[0].serverNotification('window/showMessage', { type: 1, message: 'fisk: indexing /ws failed: disk full' });
  assert.deepEqual(mock.messages.map((m) => [m.level, m.text]), [
    ['warning', message],
    ['error', 'fisk: indexing /ws failed: disk full'],
  ]);
  assert.deepEqual(seen, [{ type: 2, message }, { type: 1, message: 'fisk: indexing /ws failed: disk full' }]);
});

test("a bad setting of the extension's own falls back with one warning naming it, not repeated on restart", async () => {
  mock.settings['fisk.server.command'] = fakeServerExecutable();
  mock.settings['fisk.languages'] = 'markdown';
  const server = newServer();
  await server.restart();
  assert.deepEqual(mock.messages.map((m) => [m.level, m.text]), [
    ['warning', 'fisk: ignoring invalid settings, using defaults for: fisk.languages (expected a list of strings, got "markdown")'],
  ]);
  await server.restart();
  answerConfiguration({ items: [{ section: 'fisk', scopeUri: 'file:///ws' }] }, [null]);
  assert.equal(mock.messages.length, 1, 'the same warning is shown once');
  mock.settings['fisk.server.args'] = 'x';
  await server.restart();
  assert.equal(
    mock.messages.at(-1)?.text,
    'fisk: ignoring invalid settings, using defaults for: fisk.server.args (expected a list of strings, got "x"); fisk.languages (expected a list of strings, got "markdown")',
  );
});

test('the server command ids are not registered as VS Code commands, so a second client cannot collide', async () => {
  mock.settings['fisk.server.command'] = fakeServerExecutable();
  const server = newServer();
  await server.restart();
  assert.deepEqual(server.state, { kind: 'running' });
  for (const id of FakeLanguageClient.serverCommands) {
    assert.equal(mock.commands.has(id), false, `${id} is not a global command`);
  }
  // Another extension's client of the same server registers the ids, as the library does by default.
  const other = new FakeLanguageClient('other', 'Other', {}, {});
  await other.start();
  assert.ok(FakeLanguageClient.serverCommands.every((id) => mock.commands.has(id)));
  await server.restart();
  assert.deepEqual(server.state, { kind: 'running' }, 'ours restarts beside it');
});

test('workspace/configuration: section fisk gets the server settings, others the default answer', async () => {
  mock.settings['fisk.topK'] = 7;
  const answer = answerConfiguration({ items: [{ section: 'fisk' }, { section: 'editor' }, { section: 'fisk', scopeUri: 'file:///ws' }] }, [
    { raw: true },
    'editor',
    { raw: true },
  ]);
  const sent = { topK: 7, expansion: { provider: 'editor' }, workspaceSymbols: false };
  assert.deepEqual(answer, [sent, 'editor', sent]);
});

test('requests are workspace/executeCommand with one argument object', async () => {
  mock.settings['fisk.server.command'] = fakeServerExecutable();
  FakeLanguageClient.handlers.set('fisk.knowledge.search', (args) => ({ echo: args }));
  FakeLanguageClient.handlers.set('fisk.knowledge.status', (args) => ({ args }));
  const server = newServer();
  await server.restart();
  assert.deepEqual(await server.request('fisk.knowledge.search', { query: 'q', topK: 2 }), { echo: { query: 'q', topK: 2 } });
  await server.request('fisk.knowledge.status');
  assert.deepEqual(FakeLanguageClient.instances[0].requests[1].args, []);
});

test('restart stops the old client before starting a new one', async () => {
  mock.settings['fisk.server.command'] = fakeServerExecutable();
  const server = newServer();
  await server.restart();
  await server.restart();
  assert.equal(FakeLanguageClient.instances.length, 2);
  assert.equal(FakeLanguageClient.instances[0].stopped, true);
  assert.equal(FakeLanguageClient.instances[1].stopped, false);
  await server.stop();
  assert.deepEqual(server.state, { kind: 'stopped' });
});

test('a server that fails to start is reported, with the log one click away', async () => {
  mock.settings['fisk.server.command'] = fakeServerExecutable();
  FakeLanguageClient.startError = new Error('exited with code 2');
  const server = newServer();
  await server.restart();
  assert.deepEqual(server.state, { kind: 'failed', message: 'exited with code 2' });
  assert.match(mock.messages[0].text, /failed to start: exited with code 2/);
  assert.deepEqual(mock.messages[0].actions, ['Show Log']);
  assert.match(server.describe(), /Fisk: Restart Server/);
});

test('a server that dies while running turns the state to failed', async () => {
  mock.settings['fisk.server.command'] = fakeServerExecutable();
  const server = newServer();
  const states: string[] = [];
  server.onDidChangeState((s) => states.push(s.kind));
  await server.restart();
  FakeLanguageClient.instances[0].stateEmitter.fire({ oldState: State.Running, newState: State.Stopped });
  assert.equal(server.state.kind, 'failed');
  assert.deepEqual(states, ['starting', 'starting', 'running', 'running', 'failed']);
});

test('an unexpected error while starting is reported and a later restart still works', async () => {
  mock.settings['fisk.server.command'] = fakeServerExecutable();
  Object.defineProperty(mock.settings, 'fisk.paths', {
    configurable: true,
    get: () => {
      throw new Error('unexpected');
    },
  });
  const server = newServer();
  await server.restart();
  assert.deepEqual(server.state, { kind: 'failed', message: 'unexpected' });
  delete mock.settings['fisk.paths'];
  await server.restart();
  assert.deepEqual(server.state, { kind: 'running' });
});

test('$/progress from the server is re-emitted', async () => {
  mock.settings['fisk.server.command'] = fakeServerExecutable();
  const server = newServer();
  const seen: string[] = [];
  server.onDidProgress((p) => seen.push(p.kind));
  await server.restart();
  FakeLanguageClient.instances[0].progress({ kind: 'begin', title: 'Indexing docs' });
  FakeLanguageClient.instances[0].progress({ kind: 'end' });
  assert.deepEqual(seen, ['begin', 'end']);
});
