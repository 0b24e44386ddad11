import * as vscode from 'vscode';
import { ALSO, QUERY } from './contract';
import { logInfo } from './log';

/**
 * Asking the editor's language model for a question's extra search strings (`also`): a keyword
 * query in the docs' likely words, a short hypothetical answer as the docs would phrase it, and a
 * rephrasing, all in one request. Opt-in (`fisk.search.languageModelExpansion`). Every failure
 * (no model, no consent, an error, a timeout, a cancellation, an answer that does not parse) is
 * `undefined`: the picker keeps the plain results.
 */

/** How long the model may take before the plain results stay. */
export const EXPANSION_TIMEOUT_MS = 15000;
export const EXPANSION_JUSTIFICATION =
  'Fisk Docs Search asks the model for three search strings (keywords, a short likely answer, a rephrasing) to find the docs for the question you typed.';

/** First words that make several words a question ("how do I …", "can the exporter …"). */
const QUESTION_WORDS = new Set([
  'how', 'what', 'why', 'when', 'where', 'which', 'who', 'whom', 'whose',
  'can', 'could', 'does', 'do', 'did', 'is', 'are', 'was', 'should', 'would', 'will', 'may', 'must', 'shall',
]);

/**
 * True when the query reads as a question: at least three words, and a question mark or a question
 * word first. An identifier (`OTEL_EXPORTER_OTLP_ENDPOINT`, `New-NetFirewallRule`) or a few keywords
 * are searched as they are.
 */
export function readsAsQuestion(query: string): boolean {
  const words = query.trim().split(/\s+/).filter((w) => /\p{L}/u.test(w));
  if (words.length < 3) {
    return false;
  }
  return query.includes('?') || QUESTION_WORDS.has(words[0].toLowerCase().replace(/[^\p{L}]/gu, ''));
}

export function expansionPrompt(question: string): string {
  return [
    'A user is searching a project\'s documentation with this question:',
    '',
    question,
    '',
    'Write three search strings that would find the documentation section that answers it, from your general knowledge (you cannot see the docs):',
    '- "keywords": a keyword query in the words the documentation would most likely use (names of settings, commands, concepts);',
    '- "answer": a one- or two-sentence hypothetical answer, phrased as the documentation would say it;',
    '- "rephrasing": the question said another way.',
    'Reply with only a JSON object: {"keywords": "...", "answer": "...", "rephrasing": "..."}',
  ].join('\n');
}

const LABELS = ['keywords', 'answer', 'rephrasing'] as const;

/**
 * The strings in a model's reply: a JSON object with the three labels (also inside a code fence or
 * prose), else lines labelled `keywords:` / `answer:` / `rephrasing:`. Blank, duplicate and
 * non-string values are dropped; each is cut to the query's length limit. Empty when nothing parses.
 */
export function parseExpansion(reply: string, question: string): string[] {
  const found: unknown[] = [];
  const start = reply.indexOf('{');
  const end = reply.lastIndexOf('}');
  if (start >= 0 && end > start) {
    try {
      const value: unknown = JSON.parse(reply.slice(start, end + 1));
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        const record = value as Record<string, unknown>;
        found.push(...LABELS.map((label) => record[label]));
      }
    } catch {
      // not JSON: try labelled lines
    }
  }
  if (!found.some((v) => typeof v === 'string' && v.trim() !== '')) {
    for (const line of reply.split(/\r?\n/)) {
      const match = /^\s*[-*\d.)\s]*\**\s*(keywords?|answer|rephrasing)\s*\**\s*[:=-]\s*\**\s*(.+)$/i.exec(line);
      if (match) {
        found.push(match[2].replace(/^["'`]|["'`,]$/g, ''));
      }
    }
  }
  const out: string[] = [];
  const seen = new Set([question.trim().toLowerCase()]);
  for (const value of found) {
    if (typeof value !== 'string') {
      continue;
    }
    const text = value.replace(/\s+/g, ' ').trim().slice(0, QUERY.maxLength);
    if (text !== '' && !seen.has(text.toLowerCase()) && out.length < ALSO.maxItems) {
      seen.add(text.toLowerCase());
      out.push(text);
    }
  }
  return out;
}

/** The parts of `vscode.lm` this file uses (injectable for tests). */
export interface LanguageModelApi {
  selectChatModels(selector?: vscode.LanguageModelChatSelector): Thenable<readonly vscode.LanguageModelChat[]>;
}

export interface ExpandOptions {
  lm?: LanguageModelApi;
  timeoutMs?: number;
}

/**
 * One request to the first chat model the editor offers; resolves with the extra strings, or
 * undefined on any failure. Sending the request is what asks the user's consent (VS Code shows its
 * own dialog the first time, with the justification); a refusal is a failure like any other.
 */
export async function expandQuery(question: string, token: vscode.CancellationToken, options: ExpandOptions = {}): Promise<string[] | undefined> {
  const lm = options.lm ?? (vscode as { lm?: LanguageModelApi }).lm;
  const source = new vscode.CancellationTokenSource();
  const cancelled = token.onCancellationRequested(() => source.cancel());
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      source.cancel();
      resolve(undefined);
    }, options.timeoutMs ?? EXPANSION_TIMEOUT_MS);
  });
  const ask = async (): Promise<string[] | undefined> => {
    if (typeof lm?.selectChatModels !== 'function') {
      return undefined;
    }
    const [model] = await lm.selectChatModels();
    if (model === undefined || source.token.isCancellationRequested) {
      return undefined;
    }
    const message = vscode.LanguageModelChatMessage.User(expansionPrompt(question));
    const response = await model.sendRequest([message], { justification: EXPANSION_JUSTIFICATION }, source.token);
    let reply = '';
    for await (const fragment of response.text) {
      if (source.token.isCancellationRequested) {
        return undefined;
      }
      reply += fragment;
    }
    const strings = parseExpansion(reply, question);
    return strings.length > 0 && !source.token.isCancellationRequested ? strings : undefined;
  };
  try {
    return await Promise.race([ask(), timedOut]);
  } catch (error) {
    if (!token.isCancellationRequested) {
      logInfo(`search strings from the language model: none (${error instanceof Error ? error.message : String(error)}); plain results kept`);
    }
    return undefined;
  } finally {
    clearTimeout(timer);
    cancelled.dispose();
    source.dispose();
  }
}
