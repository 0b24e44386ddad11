import * as assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { CancellationTokenSource, Disposable } from './mock/vscode';
import { hit, reset, result } from './helpers';
import { ServerNotRunningError } from '../../common/protocol';
import { formatToolResult, parseToolInput, registerKnowledgeTool } from '../../common/tool';

beforeEach(reset);

class TextPart {
  constructor(readonly value: string) {}
}
class ToolResult {
  constructor(readonly content: unknown[]) {}
}

function fakeLm() {
  const tools = new Map<string, any>();
  return {
    tools,
    api: {
      lm: { registerTool: (name: string, tool: unknown) => (tools.set(name, tool), new Disposable()) },
      LanguageModelToolResult: ToolResult,
      LanguageModelTextPart: TextPart,
    },
  };
}

test('the query must have words; topK and also go to the server as they are (it names a limit)', () => {
  assert.throws(() => parseToolInput({}), /non-empty "query"/);
  assert.throws(() => parseToolInput({ query: '  ' }), /non-empty "query"/);
  assert.throws(() => parseToolInput(null), /non-empty "query"/);
  assert.deepEqual(parseToolInput({ query: ' setup ' }), { query: 'setup' });
  assert.deepEqual(parseToolInput({ query: 'q', topK: 20 }), { query: 'q', topK: 20 });
  for (const value of [99, 0, 2.5, '3']) {
    assert.deepEqual(parseToolInput({ query: 'q', topK: value }), { query: 'q', topK: value }, String(value));
  }
  assert.deepEqual(parseToolInput({ query: 'q', also: ['a', 'b', 'c', 'd', 'e'] }).also, ['a', 'b', 'c', 'd', 'e']);
  assert.deepEqual(parseToolInput({ query: 'q', also: 'retry' }).also, 'retry');
  assert.equal(parseToolInput({ query: 'x'.repeat(2001) }).query.length, 2001);
});

test('results are given to the model with citations, lines and snippets', () => {
  const text = formatToolResult('install', result([hit('docs/install.md#2', 4), hit('README.md#1', 0, 'Intro')]));
  assert.match(text, /^Fisk knowledge search for "install" \(lexical\)\./);
  assert.match(text, /\[1\] docs\/install\.md#2 \(docs\/install\.md:5, score 0\.75\)\nSection: Install > pip\nRun {3}pip install/);
  assert.match(text, /\[2\] README\.md#1 \(README\.md:1/);
});

test('a hit found by an extra string says which strings found it', () => {
  const found = { ...hit('docs/a.md#1', 0), foundBy: ['query', 'also[1]'] };
  const plain = { ...hit('docs/b.md#1', 0), foundBy: ['query'] };
  const text = formatToolResult('q', result([found, plain]));
  assert.match(text, /\[1\] docs\/a\.md#1 .*\nSection: Install > pip\nFound by: query, also\[1\]\nRun/);
  assert.doesNotMatch(text, /\[2\][^[]*Found by/);
});

test('empty and degraded results are explained without UI hints', () => {
  const text = formatToolResult('q', result([], { status: 'index_not_built', degraded: true, reason: 'no embeddings', tier: 'degraded: no embeddings' }));
  assert.match(text, /Search is degraded: no embeddings/);
  assert.match(text, /No results: The index has not been built yet/);
  assert.doesNotMatch(text, /Press Enter/);
});

test('no language model API: nothing is registered and nothing throws', () => {
  assert.equal(registerKnowledgeTool(async () => result([]), {}), undefined);
  assert.equal(registerKnowledgeTool(async () => result([]), { lm: {} }), undefined);
});

test('the tool is registered as fisk_knowledge_search and calls the search', async () => {
  const { tools, api } = fakeLm();
  const calls: unknown[] = [];
  assert.ok(registerKnowledgeTool(async (args) => (calls.push(args), result([hit('docs/a.md#1', 0)])), api));
  const tool = tools.get('fisk_knowledge_search');
  const token = new CancellationTokenSource().token;
  assert.match(tool.prepareInvocation({ input: { query: 'setup' } }, token).invocationMessage, /"setup"/);
  const out = await tool.invoke({ input: { query: 'setup', topK: 2 } }, token);
  assert.deepEqual(calls, [{ query: 'setup', topK: 2 }]);
  await tool.invoke({ input: { query: 'how do I set up', also: ['install setup pip', 'Install it with pip.'] } }, token);
  assert.deepEqual(calls.at(-1), { query: 'how do I set up', also: ['install setup pip', 'Install it with pip.'] }, 'also is passed on');
  await tool.invoke({ input: { query: 'how do I set up', expand: true } }, token);
  assert.deepEqual(calls.at(-1), { query: 'how do I set up' }, 'the tool never asks for expansion: the agent sends its own strings');
  assert.ok(out instanceof ToolResult);
  assert.match((out.content[0] as TextPart).value, /docs\/a\.md#1/);
});

test('a missing server becomes a message for the model; other errors propagate', async () => {
  const { tools, api } = fakeLm();
  registerKnowledgeTool(async () => {
    throw new ServerNotRunningError('The language server "fisk-ls" was not found on PATH.', 'missing');
  }, api);
  const out = await tools.get('fisk_knowledge_search').invoke({ input: { query: 'q' } }, undefined);
  assert.match(out.content[0].value, /unavailable: The language server "fisk-ls" was not found/);
  const other = fakeLm();
  registerKnowledgeTool(async () => {
    throw new Error('boom');
  }, other.api);
  await assert.rejects(other.tools.get('fisk_knowledge_search').invoke({ input: { query: 'q' } }, undefined), /boom/);
});
