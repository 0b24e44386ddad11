import * as vscode from 'vscode';
import { LSPErrorCodes, ResponseError } from 'vscode-languageclient/node';
import { errorMessage, logInfo } from './log';

/**
 * The server's `fisk/expand` request (expansion provider `editor`): the server writes the prompt
 * for a person's question, the editor's language model answers it, and the server parses the
 * reply, applies its timeout and caches the strings. The client only relays: the prompt goes as
 * one user message to the first chat model VS Code offers, and the whole reply comes back as
 * `{text}`. No model, no consent, an error or a cancellation is a ResponseError whose short
 * message the server shows as the reason the search kept its plain results.
 */

export const EXPAND_REQUEST = 'fisk/expand';
export const EXPANSION_JUSTIFICATION =
  'Fisk Docs Search asks the model for a few search strings (keywords, a short likely answer, a rephrasing) to find the docs for the question you typed.';

export interface ExpandParams {
  question: string;
  prompt: string;
}

export interface ExpandReply {
  text: string;
}

/** The parts of `vscode.lm` this file uses (injectable for tests). */
export interface LanguageModelApi {
  selectChatModels(selector?: vscode.LanguageModelChatSelector): Thenable<readonly vscode.LanguageModelChat[]>;
}

/** `vscode.lm` when this VS Code has the language model API (1.90+), else undefined. */
export function languageModels(): LanguageModelApi | undefined {
  const lm = (vscode as { lm?: Partial<LanguageModelApi> }).lm;
  return typeof lm?.selectChatModels === 'function' ? (lm as LanguageModelApi) : undefined;
}

class Refusal extends Error {}

/** Answers one `fisk/expand` request: the model's whole reply, or a ResponseError saying why not. */
export async function answerExpand(params: unknown, token: vscode.CancellationToken): Promise<ExpandReply | ResponseError> {
  const lm = languageModels();
  try {
    return { text: await ask(params, token, lm) };
  } catch (error) {
    const cancelled = token.isCancellationRequested;
    const reason = cancelled ? 'cancelled' : error instanceof Refusal ? error.message : modelFailure(error);
    logInfo(`${EXPAND_REQUEST}: no search strings from the language model (${reason})`);
    return new ResponseError(cancelled ? LSPErrorCodes.RequestCancelled : LSPErrorCodes.RequestFailed, reason);
  }
}

async function ask(params: unknown, token: vscode.CancellationToken, lm: LanguageModelApi | undefined): Promise<string> {
  const prompt = (params as Partial<ExpandParams> | undefined)?.prompt;
  if (typeof prompt !== 'string' || prompt.trim() === '') {
    throw new Refusal(`${EXPAND_REQUEST} needs a prompt`);
  }
  if (lm === undefined) {
    throw new Refusal('this VS Code has no language model API');
  }
  const [model] = await lm.selectChatModels();
  if (model === undefined) {
    throw new Refusal('no chat model available');
  }
  if (token.isCancellationRequested) {
    throw new Refusal('cancelled');
  }
  // Sending the request is what asks the user's consent (VS Code's own dialog, the first time).
  const message = vscode.LanguageModelChatMessage.User(prompt);
  const response = await model.sendRequest([message], { justification: EXPANSION_JUSTIFICATION }, token);
  let reply = '';
  for await (const fragment of response.text) {
    if (token.isCancellationRequested) {
      throw new Refusal('cancelled');
    }
    reply += fragment;
  }
  return reply;
}

/** A model failure in a few words: a refused consent says so; anything else is its message on one line. */
function modelFailure(error: unknown): string {
  if (typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'NoPermissions') {
    return 'no consent to use the language model';
  }
  return errorMessage(error).replace(/\s+/g, ' ').trim().slice(0, 200) || 'the language model failed';
}
