import * as assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { CancellationTokenSource, FakeChatModel, LanguageModelError, mock } from './mock/vscode';
import { FakeLanguageClient, ResponseError } from './mock/languageclient';
import { lm } from './mock/vscode';
import { deferred, fakeServerExecutable, flush, reset } from './helpers';
import { answerExpand, EXPAND_REQUEST, EXPANSION_JUSTIFICATION } from '../../common/expand';
import { createLog } from '../../common/log';
import { FiskServer } from '../../common/server';

beforeEach(reset);

const PARAMS = { question: 'how do I stop retries', prompt: 'Write search strings for: how do I stop retries' };

test('fisk/expand: the prompt goes verbatim as one user message to the first model, with the justification; the whole reply comes back', async () => {
  const model = new FakeChatModel();
  model.reply = ['{"keywords": "retry max', ' attempts", "answer": "Set maxAttempts to 1."}'];
  mock.chatModels = [model, new FakeChatModel('second')];
  const answer = await answerExpand(PARAMS, new CancellationTokenSource().token);
  assert.deepEqual(answer, { text: '{"keywords": "retry max attempts", "answer": "Set maxAttempts to 1."}' }, 'the fragments joined, unparsed');
  assert.equal(model.requests.length, 1);
  assert.deepEqual(
    model.requests[0].messages.map((m) => [m.role, m.content]),
    [['user', PARAMS.prompt]],
  );
  assert.equal(model.requests[0].options.justification, EXPANSION_JUSTIFICATION);
});

test('fisk/expand: no model, no language model API, a refused consent, an error or a missing prompt is a ResponseError with a short reason', async () => {
  const token = new CancellationTokenSource().token;
  const reason = async (params: unknown) => {
    const answer = await answerExpand(params, token);
    assert.ok(answer instanceof ResponseError, `an error response: ${JSON.stringify(answer)}`);
    assert.equal(answer.code, -32803, 'RequestFailed');
    return answer.message;
  };
  assert.equal(await reason(PARAMS), 'no chat model available');
  mock.noLanguageModelApi();
  assert.equal(await reason(PARAMS), 'this VS Code has no language model API');
  lm.selectChatModels = async () => mock.chatModels;
  const model = new FakeChatModel();
  mock.chatModels = [model];
  model.reply = LanguageModelError.NoPermissions('the user refused');
  assert.equal(await reason(PARAMS), 'no consent to use the language model');
  model.reply = new Error('rate limited\n  try again later');
  assert.equal(await reason(PARAMS), 'rate limited try again later');
  assert.equal(await reason({ question: 'q' }), 'fisk/expand needs a prompt');
  assert.equal(model.requests.length, 2, 'no model request without a prompt');
});

test('fisk/expand: the server cancelling the request cancels the model request and answers RequestCancelled', async () => {
  const model = new FakeChatModel();
  const slow = deferred<string[]>();
  model.reply = slow.promise;
  mock.chatModels = [model];
  const source = new CancellationTokenSource();
  const pending = answerExpand(PARAMS, source.token);
  await flush();
  source.cancel();
  assert.equal(model.requests[0].token.isCancellationRequested, true, 'the model got the cancellation');
  slow.resolve(['late']);
  const answer = await pending;
  assert.ok(answer instanceof ResponseError);
  assert.deepEqual([answer.code, answer.message], [-32800, 'cancelled']);
});

test('the language client answers the server\'s fisk/expand request with the editor\'s model', async () => {
  mock.settings['fisk.server.command'] = fakeServerExecutable();
  await new FiskServer(createLog()).restart();
  const [client] = FakeLanguageClient.instances;
  mock.chatModels = [new FakeChatModel()];
  assert.deepEqual(await client.serverRequest(EXPAND_REQUEST, PARAMS, new CancellationTokenSource().token), {
    text: '{"keywords": "k", "answer": "a", "rephrasing": "r"}',
  });
});
