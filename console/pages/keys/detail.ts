/**
 * A key's or an account's settings: one form per plugin section that has that subject (settings-form.ts), opened by
 * its own address (`#/keys?key=<hash>`, `#/keys?account=<id>`), so a link from any row, record or bookmark lands on it
 * and the Back button closes it again.
 */
import { api, query } from '../../api';
import { clear, h, notice } from '../../dom';
import { settingsHref } from '../../route';
import { loadSections, sectionForm, type Subject } from '../settings-form';
import type { Account, Key, KeysPage, Page } from './types';

type Who = Extract<Subject, 'key' | 'account'>;

/** The link that opens a key's or an account's settings (a button to look at, an address to share). */
export function settingsLink(
  p: KeysPage,
  subject: Who,
  id: string,
  text: string,
  attrs: Record<string, string>,
): HTMLAnchorElement {
  const href = settingsHref(subject, id);
  // Followed from this page (to other settings than those shown): Close goes Back to the list as it was.
  const mark = () => {
    if (!href.endsWith(location.hash)) p.state.detailFromList = true;
  };
  return h('a', { class: 'button', href, onclick: mark, ...attrs }, text);
}

/** The title of a key's or an account's settings, read from the server (a deep link names only the id). */
async function titleOf(subject: Who, id: string): Promise<string> {
  if (subject === 'key') {
    const k = (await api<Page<Key>>('GET', `keys${query({ q: id, limit: '5' })}`)).data.find((x) => x.hash === id);
    if (!k) throw new Error('No key with that hash among the keys this session sees.');
    return `Key ${k.name} (${k.label})`;
  }
  const a = (await api<Page<Account>>('GET', `accounts${query({ q: id, limit: '5' })}`)).data.find((x) => x.id === id);
  if (!a) throw new Error('No account with that id among the accounts this session sees.');
  return `Account ${a.name}`;
}

/** What the page's query names: `key=<hash>` or `account=<id>` opens its settings; neither closes them. */
export async function followDetail(p: KeysPage, q: URLSearchParams): Promise<void> {
  const key = q.get('key');
  const account = q.get('account');
  const subject: Who | undefined = key ? 'key' : account ? 'account' : undefined;
  const id = key ?? account;
  if (!subject || !id) return closeDetail(p);
  try {
    await openDetail(p, subject, id, await titleOf(subject, id));
    // An earlier link's failure no longer applies (a new key's value, shown once, stays).
    p.status.querySelector('.notice.error')?.remove();
  } catch (e) {
    closeDetail(p);
    p.say(e instanceof Error ? e.message : String(e));
  }
}

async function openDetail(p: KeysPage, subject: Who, id: string, title: string): Promise<void> {
  const sections = (await loadSections()).filter((s) => s.subjects.includes(subject));
  const forms = await Promise.all(sections.map((s) => sectionForm(p.me, s, subject, id, p.reload)));
  clear(
    p.detail,
    h(
      'header',
      { class: 'page-head' },
      h('h2', { id: 'detail-title' }, title),
      h('span', { class: 'spacer' }),
      h('button', { id: 'detail-close', type: 'button', onclick: () => leave(p) }, 'Close'),
    ),
    sections.length === 0
      ? notice(`No plugin in this gateway's chain offers settings per ${subject} (the limits plugin does).`, 'warn')
      : null,
    ...forms,
  );
  p.detail.hidden = false;
  p.detail.dataset.subject = `${subject}:${id}`;
  p.detail.scrollIntoView({ block: 'start' });
}

/** Close: Back to the list when the settings were opened from it, else the list's own address in place of this one. */
function leave(p: KeysPage): void {
  if (p.state.detailFromList) {
    p.state.detailFromList = false;
    history.back();
  } else location.replace('#/keys');
}

/** What the Settings column shows of a row: each section's summary, or that it inherits everything. */
export function settingsText(settings: Record<string, string> | undefined): string {
  const texts = Object.values(settings ?? {});
  return texts.length ? texts.join(' · ') : 'inherits';
}

export function closeDetail(p: KeysPage): void {
  clear(p.detail);
  p.detail.hidden = true;
  delete p.detail.dataset.subject;
}
