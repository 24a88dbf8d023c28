/** The Newer / Older buttons of a keyset-paged list, and the search box that starts it again. */
import { h } from '../../dom';
import type { Paging } from './types';

export function pager(id: string, paging: Paging, next: string | null, reload: () => Promise<void>): HTMLElement {
  return h(
    'div',
    { class: 'inline pager' },
    paging.before.length
      ? h(
          'button',
          { id: `${id}-newer`, onclick: () => ((paging.cursor = paging.before.pop()), void reload()) },
          'Newer',
        )
      : null,
    paging.before.length ? h('span', { class: 'muted' }, `page ${paging.before.length + 1}`) : null,
    next
      ? h(
          'button',
          {
            id: `${id}-older`,
            onclick: () => (paging.before.push(paging.cursor), (paging.cursor = next), void reload()),
          },
          'Older',
        )
      : null,
  );
}

/** Back to the first page (a new search or sort). */
export function restart(paging: Paging): void {
  paging.cursor = undefined;
  paging.before = [];
}

/** A search box that runs on Enter or when it loses focus with a changed text. */
export function searchBox(id: string, label: string, value: string, run: (q: string) => void): HTMLInputElement {
  const box: HTMLInputElement = h('input', {
    id,
    type: 'search',
    placeholder: label,
    'aria-label': label,
    value,
    onchange: () => run(box.value.trim()),
  });
  return box;
}
