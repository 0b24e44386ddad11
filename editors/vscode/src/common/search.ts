import * as vscode from 'vscode';
import { expanded, SearchArgs, SearchHit, SearchResult } from './protocol';
import {
  failureNotice,
  HitButton,
  hitItem,
  MAX_RESULTS,
  moreItem,
  Notice,
  noticeFor,
  noticeItem,
  parseQuery,
  PickItem,
  searchPlaceholder,
  searchTitle,
} from './searchItems';

export const SEARCH_DELAY_MS = 150;
/** Context key: a search picker with a scope toggle is open. */
export const SCOPE_CONTEXT = 'fisk.searchPickerHasScope';

export interface SearchPickerDeps {
  search(args: SearchArgs, token: vscode.CancellationToken): Promise<SearchResult>;
  /**
   * Whether a query's plain results are followed by the same search with `expand: true` (question
   * expansion configured, and for the editor's model a chat model offered); absent: never.
   */
  expands?(): boolean | Promise<boolean>;
  open(hit: SearchHit): Promise<unknown>;
  /** The "also in N files" button: pick one of the hit's other locations and open it; resolves with its citation. */
  openAlso(hit: SearchHit): Promise<string | undefined>;
  copy(citation: string): Promise<unknown>;
  act(notice: Notice): Promise<unknown>;
  /**
   * Shows the focused row's hit in an editor without taking the focus (as Go to Symbol does); absent:
   * no preview. `endPreview` runs when the picker closes, `accepted` false when nothing was opened.
   */
  preview?(hit: SearchHit): Promise<unknown>;
  endPreview?(accepted: boolean): Promise<unknown>;
  /** Keeps a list in the results view (the picker's pin button, and every accept with `keep`). */
  keep?(list: KeptList): void;
  /** How many results "more results" adds (the first page's size); default 5. */
  pageSize?(): number;
  delayMs?: number;
}

/** A search kept in the results view: what was asked and the answer, in the server's order. */
export interface KeptList {
  query: string;
  tags: string[];
  paths: string[];
  result: SearchResult;
}

/** A folder the picker can keep its search to: sent as `paths`, named by `label` in its title. */
export interface SearchScope {
  folder: vscode.Uri;
  /** The folder relative to its workspace folder (the workspace folder's name for its root). */
  label: string;
}

/** The scope for `uri` (a folder), or undefined when it is in no workspace folder. */
export function folderScope(uri: vscode.Uri): SearchScope | undefined {
  const root = vscode.workspace.getWorkspaceFolder(uri);
  if (root === undefined) {
    return undefined;
  }
  const multi = (vscode.workspace.workspaceFolders?.length ?? 0) > 1;
  const label = root.uri.toString() === uri.toString() ? root.name : vscode.workspace.asRelativePath(uri, multi);
  return { folder: uri, label };
}

/** How the picker opens: the folder its scope toggle switches to, and whether it starts there. */
export interface ShowOptions {
  scope?: SearchScope;
  scoped?: boolean;
  /** Accepting a row also keeps the list in the results view ("Search Knowledge (keep results)"). */
  keep?: boolean;
}

/** What the search picker shows once the workbench has its list (FiskApi.searchPicker). */
export interface PickerView {
  query: string;
  title: string;
  placeholder: string;
  /** The `paths` its searches send (empty: the whole workspace). */
  paths: string[];
  /** The `tags` its searches send (the query's `tag:NAME` words). */
  tags: string[];
  /** The citations of the rows, in order (hits only). */
  citations: string[];
  /** The rows' detail lines (hits only), as the workbench shows them. */
  details: string[];
  /** True when the list ends with a "more results" row. */
  more: boolean;
  /** The `topK` of the search shown (undefined: the server's configured number). */
  topK?: number;
  /** The citation of the row the workbench made active (undefined on a notice row). */
  active?: string;
  /** True when the list is the one refined with the language model's strings. */
  refined: boolean;
  /** The last answer's `expansion` (absent before one, or from a server without expansion). */
  expansion?: string;
}

const views = new vscode.EventEmitter<PickerView>();
/**
 * Fires when the workbench reports the picker's active row, that is once a new list has reached
 * it (a row accepted after this event is one of that list's), and when the title says why the list
 * was not expanded.
 */
export const onDidChangePicker: vscode.Event<PickerView> = views.event;

const COPY_BUTTON: HitButton = { iconPath: new vscode.ThemeIcon('copy'), tooltip: 'Copy citation', action: 'copy' };
export const KEEP_TOOLTIP = 'Keep these results in the Fisk Results view';
const KEEP_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('pin'), tooltip: KEEP_TOOLTIP };

/**
 * `Fisk: Search Knowledge`: a QuickPick that searches as you type. Requests are debounced and a
 * newer query cancels the older request; only the newest answer is shown.
 */
export class SearchPicker {
  private toggle: (() => void) | undefined;

  constructor(private readonly deps: SearchPickerDeps) {}

  /** The open picker's scope toggle (its title button; `fisk.toggleSearchScope`); false when there is none. */
  toggleScope(): boolean {
    this.toggle?.();
    return this.toggle !== undefined;
  }

  /**
   * Shows the picker; resolves with the citation it opened (an accepted hit, or one of its other
   * locations) or undefined. With a scope, a title button switches between the whole workspace and
   * that folder, and the title and placeholder name the folder while the search is kept to it.
   */
  show(initialQuery = '', options: ShowOptions = {}): Promise<string | undefined> {
    const picker = vscode.window.createQuickPick<PickItem>();
    // Rows stay in the server's order: the workbench would otherwise sort rows whose label matches
    // the typed words first. `sortByLabel` is read by the extension host without a proposal check
    // but is not in the stable typings (proposal quickPickSortByLabel).
    (picker as { sortByLabel?: boolean }).sortByLabel = false;
    const { scope } = options;
    let scoped = scope !== undefined && options.scoped === true;
    const label = () => (scoped ? scope?.label : undefined);
    const paths = (): string[] => (scoped && scope !== undefined ? [scope.folder.fsPath] : []);
    const withPaths = (args: SearchArgs, tags: string[], topK: number | undefined): SearchArgs => ({
      ...args,
      ...(scoped && scope !== undefined ? { paths: paths() } : {}),
      ...(tags.length > 0 ? { tags } : {}),
      ...(topK === undefined ? {} : { topK }),
    });
    const scopeButton = (): vscode.QuickInputButton | undefined =>
      scope === undefined
        ? undefined
        : scoped
          ? { iconPath: new vscode.ThemeIcon('root-folder'), tooltip: 'Search the whole workspace' }
          : { iconPath: new vscode.ThemeIcon('folder'), tooltip: `Search only in ${scope.label}` };
    const decorate = () => {
      picker.placeholder = searchPlaceholder(label());
      const toggleButton = scopeButton();
      picker.buttons = [...(toggleButton ? [toggleButton] : []), ...(this.deps.keep ? [KEEP_BUTTON] : [])];
    };
    picker.title = searchTitle(undefined, label());
    decorate();
    picker.matchOnDescription = false;
    picker.matchOnDetail = false;
    picker.value = initialQuery;

    let timer: ReturnType<typeof setTimeout> | undefined;
    let inFlight: vscode.CancellationTokenSource | undefined;
    let generation = 0;
    // The query last run or waiting to run: the workbench reports the value it was given (the initial
    // query) back as a change, which must not search that query a second time.
    let latest = initialQuery;
    let opening: Promise<string | undefined> = Promise.resolve(undefined);
    type Shown = { query: string; refined: boolean; paths: string[]; tags: string[]; topK?: number; more: boolean; expansion?: string; result?: SearchResult };
    let shown: Shown = { query: '', refined: false, paths: [], tags: [], more: false };
    // The citation of the row the workbench reports active: a refined list keeps it active.
    let activeCitation: string | undefined;

    /** Fires the picker view: the rows the workbench shows, with the active one. */
    const report = () => {
      views.fire({
        query: shown.query,
        title: picker.title ?? '',
        placeholder: picker.placeholder ?? '',
        paths: shown.paths,
        tags: shown.tags,
        citations: picker.items.flatMap((item) => ('hit' in item ? [item.hit.citation] : [])),
        details: picker.items.flatMap((item) => ('hit' in item ? [item.detail ?? ''] : [])),
        more: shown.more,
        ...(shown.topK === undefined ? {} : { topK: shown.topK }),
        active: activeCitation,
        refined: shown.refined,
        ...(shown.expansion === undefined ? {} : { expansion: shown.expansion }),
      });
    };

    // The first page's size, for "more results"; what `fisk.topK` (or the server's default 5) gives.
    const step = () => this.deps.pageSize?.() ?? 5;
    /**
     * A list may have more when it is full: as many rows as asked for (`topK`), or for the first page
     * (the server's configured number) at least a page; never past the server's limit.
     */
    const hasMore = (result: SearchResult, topK: number | undefined): boolean => {
      const n = result.results.length;
      return result.status === 'ok' && n > 0 && n < MAX_RESULTS && (topK === undefined ? n >= step() : n >= topK);
    };

    const showResult = (text: string, result: SearchResult, refined: boolean, topK: number | undefined, focus?: number) => {
      const { query, tags } = parseQuery(text);
      const more = hasMore(result, topK);
      shown = { query: text, refined, paths: paths(), tags, more, expansion: result.expansion, result, ...(topK === undefined ? {} : { topK }) };
      const notice = noticeFor(result, query);
      picker.title = searchTitle(result, label(), tags);
      const rows: PickItem[] = notice ? [noticeItem(notice)] : result.results.map((hit) => hitItem(hit, COPY_BUTTON));
      if (notice === undefined && more) {
        rows.push(moreItem(result.results.length, step()));
      }
      const kept =
        focus !== undefined ? rows[Math.min(focus, rows.length - 1)] : refined ? rows.find((row) => 'hit' in row && row.hit.citation === activeCitation) : undefined;
      picker.keepScrollPosition = focus !== undefined;
      picker.items = rows;
      if (kept !== undefined) {
        picker.activeItems = [kept];
      }
    };

    /**
     * The plain search, shown at once; then, when expansion is on and the plain search worked, the
     * same search with `expand: true`, whose answer replaces the rows in place when the language
     * model's strings were used (a failure only changes the title). A newer query cancels both.
     */
    const search = async (text: string, topK: number | undefined, focus: number | undefined, mine: number, token: vscode.CancellationToken): Promise<void> => {
      const current = () => mine === generation;
      const { query, tags } = parseQuery(text);
      let plain: SearchResult;
      try {
        plain = await this.deps.search(withPaths({ query }, tags, topK), token);
      } catch (error) {
        if (current() && !token.isCancellationRequested) {
          shown = { query: text, refined: false, paths: paths(), tags, more: false };
          picker.title = searchTitle(undefined, label(), tags);
          picker.items = [noticeItem(failureNotice(error))];
        }
        return;
      }
      if (!current()) {
        return;
      }
      showResult(text, plain, false, topK, focus);
      if (plain.status !== 'ok' || this.deps.expands === undefined || !(await this.deps.expands()) || !current()) {
        return;
      }
      let refined: SearchResult;
      try {
        refined = await this.deps.search(withPaths({ query, expand: true }, tags, topK), token);
      } catch {
        return; // the plain rows stay (onDidSearch and the log have the error)
      }
      if (!current()) {
        return;
      }
      if (expanded(refined) && refined.status === 'ok' && refined.results.length > 0) {
        showResult(text, refined, true, topK);
      } else if (refined.expansion?.startsWith('failed: ')) {
        shown = { ...shown, expansion: refined.expansion };
        picker.title = searchTitle(refined, label(), tags);
        report(); // the same rows, under a title that says why they were not refined
      }
    };

    /** Searches `text`; `topK` and `focus` (the row to make active) for "more results". */
    const run = (text: string, topK?: number, focus?: number): void => {
      inFlight?.cancel();
      inFlight?.dispose();
      inFlight = undefined;
      const mine = ++generation;
      if (parseQuery(text).query === '') {
        shown = { query: text, refined: false, paths: paths(), tags: parseQuery(text).tags, more: false };
        picker.items = [];
        picker.busy = false;
        return;
      }
      const source = new vscode.CancellationTokenSource();
      inFlight = source;
      picker.busy = true;
      void search(text, topK, focus, mine, source.token).finally(() => {
        if (mine === generation) {
          picker.busy = false;
        }
      });
    };

    const keep = () => {
      if (shown.result !== undefined && this.deps.keep !== undefined) {
        this.deps.keep({ query: parseQuery(shown.query).query, tags: shown.tags, paths: shown.paths, result: shown.result });
      }
    };
    let accepted = false;

    const toggle = () => {
      if (scope === undefined) {
        return;
      }
      scoped = !scoped;
      picker.title = searchTitle(undefined, label(), parseQuery(picker.value).tags);
      decorate();
      clearTimeout(timer);
      latest = picker.value;
      run(picker.value);
    };
    this.toggle = scope !== undefined ? toggle : undefined;
    // The toggle's keybinding (package.json) applies while a picker with a scope is open.
    void vscode.commands.executeCommand('setContext', SCOPE_CONTEXT, scope !== undefined);

    return new Promise<string | undefined>((resolve) => {
      const subscriptions: vscode.Disposable[] = [
        picker.onDidTriggerButton((button) => {
          if (button === KEEP_BUTTON) {
            keep();
            accepted = true; // the list stays in the view; so does the previewed editor
            picker.hide();
          } else {
            toggle();
          }
        }),
        picker.onDidChangeValue((value) => {
          if (value === latest) {
            return;
          }
          latest = value;
          clearTimeout(timer);
          timer = setTimeout(() => run(value), this.deps.delayMs ?? SEARCH_DELAY_MS);
        }),
        picker.onDidChangeActive((active) => {
          const row = active[0];
          if (row === undefined || !picker.items.includes(row)) {
            return;
          }
          activeCitation = 'hit' in row ? row.hit.citation : undefined;
          report();
          if ('hit' in row && this.deps.preview !== undefined) {
            void this.deps.preview(row.hit).catch(() => undefined);
          }
        }),
        picker.onDidTriggerItemButton((event) => {
          if (!('hit' in event.item)) {
            return;
          }
          const { hit } = event.item;
          if ((event.button as HitButton).action === 'copies') {
            // The other locations replace this picker (a second pick of them), which opens one:
            // the preview is not undone under it.
            accepted = true;
            opening = this.deps.openAlso(hit);
            picker.hide();
          } else {
            void this.deps.copy(hit.citation);
          }
        }),
        picker.onDidAccept(() => {
          const item = picker.selectedItems[0] ?? picker.activeItems[0];
          if (item === undefined) {
            return;
          }
          if ('more' in item) {
            // The picker stays open: the same search for more rows, the first new one active.
            clearTimeout(timer);
            run(shown.query, item.more, shown.result?.results.length ?? 0);
            return;
          }
          if ('hit' in item) {
            const { citation } = item.hit;
            if (options.keep === true) {
              keep();
            }
            accepted = true;
            opening = this.deps.open(item.hit).then(() => citation);
          } else {
            opening = this.deps.act(item.notice).then(() => undefined);
          }
          picker.hide();
        }),
        picker.onDidHide(() => {
          if (this.toggle === toggle) {
            this.toggle = undefined;
            void vscode.commands.executeCommand('setContext', SCOPE_CONTEXT, false);
          }
          clearTimeout(timer);
          generation++;
          inFlight?.cancel();
          inFlight?.dispose();
          vscode.Disposable.from(...subscriptions).dispose();
          picker.dispose();
          const ended = this.deps.endPreview?.(accepted) ?? Promise.resolve();
          ended.then(
            () => opening.then(resolve, () => resolve(undefined)),
            () => opening.then(resolve, () => resolve(undefined)),
          );
        }),
      ];
      picker.show();
      if (initialQuery !== '') {
        run(initialQuery);
      }
    });
  }
}
