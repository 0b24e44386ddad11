/** Result shapes of the server's commands, as specified in docs/lsp-protocol.md. */

export interface LspPosition {
  line: number;
  character: number;
}

export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

export interface LocationLink {
  targetUri: string;
  targetRange: LspRange;
  targetSelectionRange: LspRange;
}

export type SearchStatus = 'ok' | 'index_not_built' | 'index_empty' | 'no_terms';

/** A `[start, end)` range of Unicode code points in a snippet. */
export type Highlight = [number, number];

/** Another location of a result's text (a near-identical copy, e.g. another version of the page). */
export interface OtherLocation {
  citation: string;
  location: LocationLink;
}

export interface SearchHit {
  citation: string;
  /** Heading path of the part of the chunk that matched. */
  section: string;
  /** One line around the matched words. */
  snippet: string;
  /** The matched words in `snippet` (absent from older servers). */
  highlights?: Highlight[];
  score: number;
  /** targetSelectionRange: the lines that matched. */
  location: LocationLink;
  /** The other copies collapsed into this result, best first (absent from older servers). */
  copies?: OtherLocation[];
  /** The same list under its former name, from a server older than the rename (read by `copiesOf`). */
  also?: OtherLocation[];
  /** Which of the search's strings found this hit: "query", "also[0]", … (absent from older servers). */
  foundBy?: string[];
}

/** An index run going on: `files` of `total` handled (`total` null while it counts). */
export interface IndexRun {
  files: number;
  total: number | null;
}

/**
 * What became of question expansion in a search: "off" (not asked, or no expander configured), "not
 * needed" (the plain results were strong), "used", "cached" (the same question's strings, reused)
 * or "failed: <reason>" (the plain results are returned).
 */
export type Expansion = 'off' | 'not needed' | 'used' | 'cached' | `failed: ${string}`;

export interface SearchResult {
  tier: string;
  status: SearchStatus;
  /** The server's sentence for the outcome (absent from older servers). */
  note?: string | null;
  /** Set while an index run goes on: the results are the ones so far (absent from older servers). */
  indexing?: IndexRun | null;
  degraded: boolean;
  reason: string | null;
  results: SearchHit[];
  /** Absent from servers without expansion. */
  expansion?: Expansion;
  /** The strings fused with the query (empty unless expansion is used or cached). */
  expansionStrings?: string[];
}

/** True when the results were refined with the language model's strings. */
export function expanded(result: SearchResult): boolean {
  return result.expansion === 'used' || result.expansion === 'cached';
}

export interface ShowResult {
  citation: string;
  section: string;
  content: string;
  location: LocationLink;
  stale: boolean;
}

export interface ReindexResult {
  files: number;
  added: number;
  updated: number;
  skipped: number;
  removed: number;
  chunks: number;
}

/** How many of a hybrid root's chunks have a vector yet (vectors fill in behind the lexical index). */
export interface VectorCoverage {
  embedded: number;
  chunks: number;
}

export interface RootStatus {
  root: string;
  store: string;
  documents: number;
  chunks: number;
  /** Hybrid roots only: null or absent when the root is lexical. */
  vectors?: VectorCoverage | null;
  /** True while the server embeds this root's backlog in the background. */
  embedding?: boolean;
  /** Optional extras some servers send per root. */
  built?: boolean;
  indexing?: boolean;
  error?: string | null;
}

export interface IndexStatus {
  tier: string;
  roots: RootStatus[];
  indexing: boolean;
}

/** The `fisk.knowledge.search` argument object (docs/lsp-protocol.md). */
export interface SearchArgs {
  query: string;
  /** Absent: the server's configured number of results applies. */
  topK?: number;
  /** Up to 4 extra search strings in the docs' likely words, fused with the query's results. */
  also?: string[];
  /** Folders, files or globs to search in (relative to each project root, or absolute); absent: everything. */
  paths?: string[];
  /** Keep to pages whose front matter lists one of these tags (case and a leading `#` ignored). */
  tags?: string[];
  /**
   * Ask the server's expander (a language model) for extra search strings when the plain results are
   * weak. Only the picker sets it, for a person's query; the language model tool never does.
   */
  expand?: boolean;
}

/** Error thrown when a request needs the server but it is not running; `message` says why. */
export class ServerNotRunningError extends Error {
  constructor(
    message: string,
    /** The server state: 'missing' (executable not found), 'starting', 'failed' or 'stopped'. */
    readonly state: string,
  ) {
    super(message);
    this.name = 'ServerNotRunningError';
  }
}
