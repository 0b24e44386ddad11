import * as vscode from 'vscode';
import { SearchHit, SearchResult } from './protocol';
import { failureNotice, hitItem, Notice, noticeFor, noticeItem, PickItem, searchTitle } from './searchItems';

export const SEARCH_DELAY_MS = 150;

export interface SearchPickerDeps {
  search(query: string, token: vscode.CancellationToken): Promise<SearchResult>;
  open(hit: SearchHit): Promise<unknown>;
  copy(citation: string): Promise<unknown>;
  act(notice: Notice): Promise<unknown>;
  delayMs?: number;
}

const COPY_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('copy'), tooltip: 'Copy citation' };

/**
 * `Fisk: Search Knowledge`: a QuickPick that searches as you type. Requests are debounced and a
 * newer query cancels the older request; only the newest answer is shown.
 */
export class SearchPicker {
  constructor(private readonly deps: SearchPickerDeps) {}

  /** Shows the picker; resolves with the accepted hit (after opening it) or undefined. */
  show(initialQuery = ''): Promise<SearchHit | undefined> {
    const picker = vscode.window.createQuickPick<PickItem>();
    picker.title = searchTitle();
    picker.placeholder = 'Search the workspace docs';
    picker.matchOnDescription = false;
    picker.matchOnDetail = false;
    picker.value = initialQuery;

    let timer: ReturnType<typeof setTimeout> | undefined;
    let inFlight: vscode.CancellationTokenSource | undefined;
    let generation = 0;
    let accepted: SearchHit | undefined;
    let opening: Promise<unknown> = Promise.resolve();

    const run = (query: string): void => {
      inFlight?.cancel();
      inFlight?.dispose();
      inFlight = undefined;
      const mine = ++generation;
      if (query.trim() === '') {
        picker.items = [];
        picker.busy = false;
        return;
      }
      const source = new vscode.CancellationTokenSource();
      inFlight = source;
      picker.busy = true;
      this.deps.search(query, source.token).then(
        (result) => {
          if (mine !== generation) {
            return;
          }
          const notice = noticeFor(result, query);
          picker.title = searchTitle(result);
          picker.items = notice ? [noticeItem(notice)] : result.results.map((hit) => hitItem(hit, COPY_BUTTON));
          picker.busy = false;
        },
        (error: unknown) => {
          if (mine !== generation || source.token.isCancellationRequested) {
            return;
          }
          picker.title = searchTitle();
          picker.items = [noticeItem(failureNotice(error))];
          picker.busy = false;
        },
      );
    };

    return new Promise<SearchHit | undefined>((resolve) => {
      const subscriptions: vscode.Disposable[] = [
        picker.onDidChangeValue((value) => {
          clearTimeout(timer);
          timer = setTimeout(() => run(value), this.deps.delayMs ?? SEARCH_DELAY_MS);
        }),
        picker.onDidTriggerItemButton((event) => {
          if ('hit' in event.item) {
            void this.deps.copy(event.item.hit.citation);
          }
        }),
        picker.onDidAccept(() => {
          const item = picker.selectedItems[0] ?? picker.activeItems[0];
          if (item === undefined) {
            return;
          }
          if ('hit' in item) {
            accepted = item.hit;
            opening = this.deps.open(item.hit);
          } else {
            opening = this.deps.act(item.notice);
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
          opening.then(
            () => resolve(accepted),
            () => resolve(undefined),
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
