import * as assert from 'node:assert/strict';
import { beforeEach, mock as nodeMock, test } from 'node:test';
import { CancellationTokenSource, FakeChatModel, LanguageModelError, mock } from './mock/vscode';
import { deferred, flush, reset } from './helpers';
import { EXPANSION_TIMEOUT_MS, expandQuery, parseExpansion, readsAsQuestion } from '../../common/expand';

beforeEach(reset);

test('a question is several words with a question word first or a question mark; identifiers and keywords are not', () => {
  for (const q of ['how do I configure the exporter', 'Why does my collector drop spans', 'exporter keeps dropping spans?', 'can the SDK batch logs']) {
    assert.equal(readsAsQuestion(q), true, q);
  }
  for (const q of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'New-NetFirewallRule', 'how to?', 'batch span processor', 'what?', '', 'exporter retry backoff settings']) {
    assert.equal(readsAsQuestion(q), false, q);
  }
});

test('the reply is parsed defensively: JSON (fenced or in prose), else labelled lines; blanks, duplicates and the question itself are dropped', () => {
  const q = 'how do I stop retries';
  assert.deepEqual(parseExpansion('{"keywords": "retry max attempts", "answer": "Set maxAttempts to 1.", "rephrasing": "disable retries"}', q), [
    'retry max attempts',
    'Set maxAttempts to 1.',
    'disable retries',
  ]);
  assert.deepEqual(parseExpansion('Sure!\n```json\n{"keywords": "retry", "answer": "", "rephrasing": "retry"}\n```', q), ['retry']);
  assert.deepEqual(parseExpansion('Keywords: retry policy\n**Answer:** Retries stop after maxAttempts.\n- rephrasing: How do I stop retries', q), [
    'retry policy',
    'Retries stop after maxAttempts.',
  ]);
  assert.deepEqual(parseExpansion('{"keywords": 3, "answer": null}', q), []);
  assert.deepEqual(parseExpansion('I cannot help with that.', q), []);
  assert.equal(parseExpansion(`{"answer": "${'x'.repeat(3000)}"}`, q)[0].length, 2000, 'cut to the query limit');
});

test('one request to the first model, with the question and a justification; its strings come back', async () => {
  const model = new FakeChatModel();
  model.reply = ['{"keywords": "exporter retry", ', '"answer": "The exporter retries.", "rephrasing": "exporter retries"}'];
  mock.chatModels = [model, new FakeChatModel('second')];
  const strings = await expandQuery('how does the exporter retry', new CancellationTokenSource().token);
  assert.deepEqual(strings, ['exporter retry', 'The exporter retries.', 'exporter retries']);
  assert.equal(model.requests.length, 1);
  assert.match(model.requests[0].messages[0].content, /how does the exporter retry/);
  assert.match(model.requests[0].options.justification, /search strings/);
});

test('no model, no language model API, a refusal, an error or an unparsable reply: undefined', async () => {
  const token = new CancellationTokenSource().token;
  assert.equal(await expandQuery('how do I x y', token), undefined, 'no model');
  assert.equal(await expandQuery('how do I x y', token, { lm: {} as never }), undefined, 'no API');
  const model = new FakeChatModel();
  mock.chatModels = [model];
  model.reply = LanguageModelError.NoPermissions('the user refused');
  assert.equal(await expandQuery('how do I x y', token), undefined, 'refused');
  model.reply = new Error('boom');
  assert.equal(await expandQuery('how do I x y', token), undefined, 'error');
  model.reply = ['no JSON here'];
  assert.equal(await expandQuery('how do I x y', token), undefined, 'unparsable');
});

test('a timeout or a cancellation gives undefined and cancels the model request', async () => {
  nodeMock.timers.enable({ apis: ['setTimeout'] });
  try {
    const model = new FakeChatModel();
    mock.chatModels = [model];
    const slow = deferred<string[]>();
    model.reply = slow.promise;
    const pending = expandQuery('how do I x y', new CancellationTokenSource().token);
    await flush();
    nodeMock.timers.tick(EXPANSION_TIMEOUT_MS);
    assert.equal(await pending, undefined, 'timed out');
    assert.equal(model.requests[0].token.isCancellationRequested, true, 'the model request was cancelled');

    const source = new CancellationTokenSource();
    const cancelled = expandQuery('how do I x y', source.token);
    await flush();
    source.cancel();
    slow.resolve(['{"keywords": "late"}']);
    assert.equal(await cancelled, undefined, 'cancelled');
    assert.equal(model.requests[1].token.isCancellationRequested, true);
  } finally {
    nodeMock.timers.reset();
  }
});
