import * as vscode from 'vscode';
import { SearchArgs, SearchHit, SearchResult } from './protocol';
import { failureNotice, HitButton, hitItem, Notice, noticeFor, noticeItem, PickItem, searchTitle } from './searchItems';

export const SEARCH_DELAY_MS = 150;

export interface SearchPickerDeps {
  search(args: SearchArgs, token: vscode.CancellationToken): Promise<SearchResult>;
  /**
   * Extra search strings for a query (the editor's language model, when the user turned that on),
   * or undefined to keep the plain results. Called for every query; it decides which ones to expand.
   */
  expand?(query: string, token: vscode.CancellationToken): Promise<string[] | undefined>;
  open(hit: SearchHit): Promise<unknown>;
  /** The "also in N files" button: pick one of the hit's other locations and open it; resolves with its citation. */
  openAlso(hit: SearchHit): Promise<string | undefined>;
  copy(citation: string): Promise<unknown>;
  act(notice: Notice): Promise<unknown>;
  delayMs?: number;
}

/** What the search picker shows once the workbench has its list (FiskApi.searchPicker). */
export interface PickerView {
  query: string;
  title: string;
  placeholder: string;
  /** The citations of the rows, in order (hits only). */
  citations: string[];
  /** The citation of the row the workbench made active (undefined on a notice row). */
  active?: string;
  /** True when the list is the one refined with the language model's strings. */
  refined: boolean;
}

const views = new vscode.EventEmitter<PickerView>();
/**
 * Fires when the workbench reports the picker's active row, that is once a new list has reached
 * it: a row accepted after this event is one of that list's.
 */
export const onDidChangePicker: vscode.Event<PickerView> = views.event;

const COPY_BUTTON: HitButton = { iconPath: new vscode.ThemeIcon('copy'), tooltip: 'Copy citation', action: 'copy' };

/**
 * `Fisk: Search Knowledge`: a QuickPick that searches as you type. Requests are debounced and a
 * newer query cancels the older request; only the newest answer is shown.
 */
export class SearchPicker {
  constructor(private readonly deps: SearchPickerDeps) {}

  /** Shows the picker; resolves with the citation it opened (an accepted hit, or one of its other locations) or undefined. */
  show(initialQuery = ''): Promise<string | undefined> {
    const picker = vscode.window.createQuickPick<PickItem>();
    picker.title = searchTitle();
    picker.placeholder = 'Search the workspace docs';
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
    let shown: { query: string; refined: boolean } = { query: '', refined: false };

    const run = (query: string): void => {
      inFlight?.cancel();
      inFlight?.dispose();
      inFlight = undefined;
      const mine = ++generation;
      if (query.trim() === '') {
        shown = { query, refined: false };
        picker.items = [];
        picker.busy = false;
        return;
      }
      const source = new vscode.CancellationTokenSource();
      inFlight = source;
      picker.busy = true;
      // The plain results show at once; extra strings, when they come, refine the list once.
      let refined = false;
      let pending = 1;
      const settle = () => {
        if (--pending === 0 && mine === generation) {
          picker.busy = false;
        }
      };
      const show = (result: SearchResult) => {
        shown = { query, refined };
        const notice = noticeFor(result, query);
        picker.title = searchTitle(result);
        picker.items = notice ? [noticeItem(notice)] : result.results.map((hit) => hitItem(hit, COPY_BUTTON));
      };
      this.deps.search({ query }, source.token).then(
        (result) => {
          if (mine === generation && !refined) {
            show(result);
          }
          settle();
        },
        (error: unknown) => {
          if (mine === generation && !refined && !source.token.isCancellationRequested) {
            shown = { query, refined: false };
            picker.title = searchTitle();
            picker.items = [noticeItem(failureNotice(error))];
          }
          settle();
        },
      );
      if (this.deps.expand !== undefined) {
        pending++;
        this.deps
          .expand(query, source.token)
          .then((also) =>
            also === undefined || also.length === 0 || mine !== generation ? undefined : this.deps.search({ query, also }, source.token),
          )
          .then(
            (result) => {
              // A refined answer with nothing to show keeps the plain list.
              if (result !== undefined && mine === generation && result.status === 'ok' && result.results.length > 0) {
                refined = true;
                show(result);
              }
              settle();
            },
            () => settle(),
          );
      }
    };

    return new Promise<string | undefined>((resolve) => {
      const subscriptions: vscode.Disposable[] = [
        picker.onDidChangeValue((value) => {
          if (value === latest) {
            return;
          }
          latest = value;
          clearTimeout(timer);
          timer = setTimeout(() => run(value), this.deps.delayMs ?? SEARCH_DELAY_MS);
        }),
        picker.onDidChangeActive((active) => {
          const rows = picker.items;
          const row = active[0];
          if (row === undefined || !rows.includes(row)) {
            return;
          }
          const citations = rows.flatMap((item) => ('hit' in item ? [item.hit.citation] : []));
          views.fire({
            query: shown.query,
            title: picker.title ?? '',
            placeholder: picker.placeholder ?? '',
            citations,
            active: 'hit' in row ? row.hit.citation : undefined,
            refined: shown.refined,
          });
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
