/** Links from anywhere a key or an account is shown (activity, a record) to its settings on the Accounts & keys page. */
import { h } from '../dom';
import { settingsHref } from '../route';

export function settingsLinkTo(subject: 'key' | 'account', id: string, text: string): HTMLAnchorElement {
  return h(
    'a',
    {
      href: settingsHref(subject, id),
      class: 'settings-link',
      [`data-${subject}-link`]: id,
      title: `This ${subject}'s settings: allowlist, rate limits, budget alerts`,
    },
    text,
  );
}
