/** A key's or an account's settings: one form per plugin section that has that subject (settings-form.ts). */
import { clear, h, notice } from '../../dom';
import { loadSections, sectionForm, type Subject } from '../settings-form';
import type { KeysPage } from './types';

export async function openDetail(p: KeysPage, subject: Extract<Subject, 'key' | 'account'>, id: string, title: string) {
  const sections = (await loadSections()).filter((s) => s.subjects.includes(subject));
  const forms = await Promise.all(sections.map((s) => sectionForm(p.me, s, subject, id, p.reload)));
  clear(
    p.detail,
    h(
      'header',
      { class: 'page-head' },
      h('h2', { id: 'detail-title' }, title),
      h('span', { class: 'spacer' }),
      h('button', { id: 'detail-close', type: 'button', onclick: () => closeDetail(p) }, 'Close'),
    ),
    sections.length === 0
      ? notice(`No plugin in this gateway's chain offers settings per ${subject} (the limits plugin does).`, 'warn')
      : null,
    ...forms,
  );
  p.detail.hidden = false;
  p.detail.scrollIntoView({ block: 'start' });
}

/** What the Settings column shows of a row: each section's summary, or that it inherits everything. */
export function settingsText(settings: Record<string, string> | undefined): string {
  const texts = Object.values(settings ?? {});
  return texts.length ? texts.join(' · ') : 'inherits';
}

export function closeDetail(p: KeysPage): void {
  clear(p.detail);
  p.detail.hidden = true;
}
