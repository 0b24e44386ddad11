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

test('input is validated like the schema in package.json', () => {
  assert.throws(() => parseToolInput({}), /non-empty "query"/);
  assert.throws(() => parseToolInput({ query: '  ' }), /non-empty "query"/);
  assert.throws(() => parseToolInput(null), /non-empty "query"/);
  assert.deepEqual(parseToolInput({ query: ' setup ' }), { query: 'setup' });
  assert.deepEqual(parseToolInput({ query: 'q', topK: 20 }), { query: 'q', topK: 20 });
  assert.deepEqual(parseToolInput({ query: 'q', topK: 1 }), { query: 'q', topK: 1 });
  for (const bad of [99, 21, 0, 2.5, '3']) {
    assert.throws(() => parseToolInput({ query: 'q', topK: bad }), /fisk_knowledge_search: topK: expected an integer from 1 to 20, got /, String(bad));
  }
  assert.deepEqual(parseToolInput({ query: 'q', also: [' retry backoff ', '', 'The exporter retries.'] }), { query: 'q', also: ['retry backoff', 'The exporter retries.'] });
  assert.deepEqual(parseToolInput({ query: 'q', also: [] }), { query: 'q' }, 'an empty list is none');
  assert.deepEqual(parseToolInput({ query: 'q', also: ['a', 'b', 'c', 'd'] }).also, ['a', 'b', 'c', 'd']);
  assert.throws(() => parseToolInput({ query: 'q', also: ['a', 'b', 'c', 'd', 'e'] }), { message: 'fisk_knowledge_search: also: expected at most 4 strings, got 5' });
  assert.throws(() => parseToolInput({ query: 'q', also: 'retry' }), /fisk_knowledge_search: also: expected a list of at most 4 strings, got "retry"/);
  assert.throws(() => parseToolInput({ query: 'q', also: ['ok', 3] }), { message: 'fisk_knowledge_search: also[1]: expected a string of at most 2,000 characters, got 3' });
  assert.throws(() => parseToolInput({ query: 'q', also: ['x'.repeat(2001)] }), {
    message: 'fisk_knowledge_search: also[0]: expected a string of at most 2,000 characters, got 2,001 characters; shorten it',
  });
  assert.throws(() => parseToolInput({ query: 'x'.repeat(2001) }), {
    message: 'fisk_knowledge_search: query: expected a string of at most 2,000 characters, got 2,001 characters; shorten it',
  });
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
