import * as vscode from 'vscode';
import { TOOL_NAME } from './constants';
import { logInfo } from './log';
import { SearchArgs, SearchHit, SearchResult, ServerNotRunningError } from './protocol';
import { lineReference, noticeFor, oneLine } from './searchItems';

/** The parts of the Language Model Tool API (VS Code 1.95+) this file uses; older hosts lack them. */
interface ToolOptions {
  input: unknown;
}
interface LanguageModelToolApi {
  lm?: {
    registerTool?(
      name: string,
      tool: {
        prepareInvocation?(options: ToolOptions, token: vscode.CancellationToken): { invocationMessage: string };
        invoke(options: ToolOptions, token: vscode.CancellationToken): Promise<unknown>;
      },
    ): vscode.Disposable;
  };
  LanguageModelToolResult?: new (content: unknown[]) => unknown;
  LanguageModelTextPart?: new (value: string) => unknown;
}

export type ToolSearch = (args: SearchArgs, token: vscode.CancellationToken) => Promise<SearchResult>;

/**
 * Registers `fisk_knowledge_search` so agent mode can ground answers in the workspace docs.
 * Returns undefined (and the extension still activates) where the API does not exist.
 */
export function registerKnowledgeTool(search: ToolSearch, api: LanguageModelToolApi = vscode as LanguageModelToolApi): vscode.Disposable | undefined {
  const { lm, LanguageModelToolResult: Result, LanguageModelTextPart: TextPart } = api;
  if (typeof lm?.registerTool !== 'function' || Result === undefined || TextPart === undefined) {
    logInfo(`this VS Code has no language model tool API; ${TOOL_NAME} is not registered`);
    return undefined;
  }
  return lm.registerTool(TOOL_NAME, {
    prepareInvocation: (options) => ({
      invocationMessage: `Searching the workspace docs for "${oneLine(String((options.input as { query?: unknown })?.query ?? ''), 60)}"`,
    }),
    invoke: async (options, token) => {
      const args = parseToolInput(options.input);
      let text: string;
      try {
        text = formatToolResult(args.query, await search(args, token));
      } catch (error) {
        if (!(error instanceof ServerNotRunningError)) {
          throw error;
        }
        text = `Fisk knowledge search is unavailable: ${error.message}`;
      }
      return new Result([new TextPart(text)]);
    },
  });
}

/**
 * The tool input as the search's arguments. Only a query with words is required here (a model learns
 * to send words); `topK` and `also` go to the server as they are, and its error names a limit the
 * model can correct (nothing is clamped).
 */
export function parseToolInput(input: unknown): SearchArgs {
  const value = (typeof input === 'object' && input !== null ? input : {}) as { query?: unknown; topK?: unknown; also?: unknown };
  if (typeof value.query !== 'string' || value.query.trim() === '') {
    throw new Error(`${TOOL_NAME} needs a non-empty "query" string`);
  }
  const args: SearchArgs = { query: value.query.trim() };
  if (value.topK !== undefined && value.topK !== null) {
    args.topK = value.topK as number;
  }
  if (value.also !== undefined && value.also !== null) {
    args.also = value.also as string[];
  }
  return args;
}

/** The search result as plain text for a model: tier, then each hit with its citation and snippet. */
export function formatToolResult(query: string, result: SearchResult): string {
  const header = `Fisk knowledge search for "${query}" (${result.tier}).`;
  const degraded = result.degraded ? `\nSearch is degraded: ${result.reason ?? 'see tier'}. Results are lexical only.` : '';
  const notice = noticeFor(result, query);
  if (notice !== undefined) {
    return `${header}${degraded}\nNo results: ${stripIcon(notice.label)}. ${notice.detail.replace(/ ?Press Enter[^.]*\./, '')}`.trim();
  }
  const hits = result.results.map(
    (hit, i) =>
      `[${i + 1}] ${hit.citation} (${lineReference(hit)}, score ${hit.score.toFixed(2)})\n` +
      `Section: ${hit.section}\n${foundBy(hit)}${hit.snippet.trim()}`,
  );
  return `${header}${degraded}\nCite sources as relpath#ordinal.\n\n${hits.join('\n\n')}`;
}

/** "Found by: query, also[1]" when the search had extra strings and the server says which found the hit. */
function foundBy(hit: SearchHit): string {
  const by = hit.foundBy ?? [];
  return by.some((name) => name !== 'query') ? `Found by: ${by.join(', ')}\n` : '';
}

function stripIcon(label: string): string {
  return label.replace(/^\$\([^)]*\)\s*/, '');
}
