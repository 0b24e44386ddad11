import * as vscode from 'vscode';
import { expanded, SearchArgs, SearchHit, SearchResult } from './protocol';
import { failureNotice, HitButton, hitItem, Notice, noticeFor, noticeItem, PickItem, searchPlaceholder, searchTitle } from './searchItems';

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
  delayMs?: number;
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
}

/** What the search picker shows once the workbench has its list (FiskApi.searchPicker). */
export interface PickerView {
  query: string;
  title: string;
  placeholder: string;
  /** The `paths` its searches send (empty: the whole workspace). */
  paths: string[];
  /** The citations of the rows, in order (hits only). */
  citations: string[];
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
    const { scope } = options;
    let scoped = scope !== undefined && options.scoped === true;
    const label = () => (scoped ? scope?.label : undefined);
    const paths = (): string[] => (scoped && scope !== undefined ? [scope.folder.fsPath] : []);
    const withPaths = (args: SearchArgs): SearchArgs => (scoped && scope !== undefined ? { ...args, paths: paths() } : args);
    const decorate = () => {
      picker.placeholder = searchPlaceholder(label());
      if (scope !== undefined) {
        picker.buttons = [
          scoped
            ? { iconPath: new vscode.ThemeIcon('root-folder'), tooltip: 'Search the whole workspace' }
            : { iconPath: new vscode.ThemeIcon('folder'), tooltip: `Search only in ${scope.label}` },
        ];
      }
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
    let shown: { query: string; refined: boolean; paths: string[]; expansion?: string } = { query: '', refined: false, paths: [] };
    // The citation of the row the workbench reports active: a refined list keeps it active.
    let activeCitation: string | undefined;

    /** Fires the picker view: the rows the workbench shows, with the active one. */
    const report = () => {
      views.fire({
        query: shown.query,
        title: picker.title ?? '',
        placeholder: picker.placeholder ?? '',
        paths: shown.paths,
        citations: picker.items.flatMap((item) => ('hit' in item ? [item.hit.citation] : [])),
        active: activeCitation,
        refined: shown.refined,
        ...(shown.expansion === undefined ? {} : { expansion: shown.expansion }),
      });
    };

    const showResult = (query: string, result: SearchResult, refined: boolean) => {
      shown = { query, refined, paths: paths(), expansion: result.expansion };
      const notice = noticeFor(result, query);
      picker.title = searchTitle(result, label());
      const rows = notice ? [noticeItem(notice)] : result.results.map((hit) => hitItem(hit, COPY_BUTTON));
      const kept = refined ? rows.find((row) => 'hit' in row && row.hit.citation === activeCitation) : undefined;
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
    const search = async (query: string, mine: number, token: vscode.CancellationToken): Promise<void> => {
      const current = () => mine === generation;
      let plain: SearchResult;
      try {
        plain = await this.deps.search(withPaths({ query }), token);
      } catch (error) {
        if (current() && !token.isCancellationRequested) {
          shown = { query, refined: false, paths: paths() };
          picker.title = searchTitle(undefined, label());
          picker.items = [noticeItem(failureNotice(error))];
        }
        return;
      }
      if (!current()) {
        return;
      }
      showResult(query, plain, false);
      if (plain.status !== 'ok' || this.deps.expands === undefined || !(await this.deps.expands()) || !current()) {
        return;
      }
      let refined: SearchResult;
      try {
        refined = await this.deps.search(withPaths({ query, expand: true }), token);
      } catch {
        return; // the plain rows stay (onDidSearch and the log have the error)
      }
      if (!current()) {
        return;
      }
      if (expanded(refined) && refined.status === 'ok' && refined.results.length > 0) {
        showResult(query, refined, true);
      } else if (refined.expansion?.startsWith('failed: ')) {
        shown = { ...shown, expansion: refined.expansion };
        picker.title = searchTitle(refined, label());
        report(); // the same rows, under a title that says why they were not refined
      }
    };

    const run = (query: string): void => {
      inFlight?.cancel();
      inFlight?.dispose();
      inFlight = undefined;
      const mine = ++generation;
      if (query.trim() === '') {
        shown = { query, refined: false, paths: paths() };
        picker.items = [];
        picker.busy = false;
        return;
      }
      const source = new vscode.CancellationTokenSource();
      inFlight = source;
      picker.busy = true;
      void search(query, mine, source.token).finally(() => {
        if (mine === generation) {
          picker.busy = false;
        }
      });
    };

    const toggle = () => {
      if (scope === undefined) {
        return;
      }
      scoped = !scoped;
      picker.title = searchTitle(undefined, label());
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
        picker.onDidTriggerButton(() => toggle()),
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
        }),
        picker.onDidTriggerItemButton((event) => {
          if (!('hit' in event.item)) {
            return;
          }
          const { hit } = event.item;
          if ((event.button as HitButton).action === 'also') {
            // The other locations replace this picker (a second pick of them).
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
          if ('hit' in item) {
            const { citation } = item.hit;
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
          opening.then(resolve, () => resolve(undefined));
        }),
      ];
      picker.show();
      if (initialQuery !== '') {
        run(initialQuery);
      }
    });
  }
}
