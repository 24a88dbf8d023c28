/** A tiny DOM builder: text always goes in as text (never as HTML), so data cannot inject markup. */
type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined | ((e: Event) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v);
    else if (k === 'value' && 'value' in el) (el as HTMLInputElement).value = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

export function clear(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** The label of money (console.credit_unit, from GET /console/api/me). */
export const unit = { label: 'credits' };

/**
 * Money for people: fixed decimals with thousands separators (`1,234.50`), never an exponent; amounts below 1 keep
 * four decimals (`0.0037`), smaller ones two significant digits (`0.000000060`).
 */
export function credits(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  const abs = Math.abs(n);
  // Below 0.0001 (one request's cost): two significant digits, in fixed notation (0.000000060, not 6e-8).
  const digits = abs >= 1 ? 2 : abs >= 0.0001 || abs === 0 ? 4 : Math.min(12, 1 - Math.floor(Math.log10(abs)));
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Money with its unit: `1,234.50 USD`. */
export function money(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : `${credits(n)} ${unit.label}`;
}

/** A share for people: `2.5%`, `0%`, or `—` without a total. */
export function percent(part: number, whole: number): string {
  return whole ? `${((100 * part) / whole).toFixed(part === 0 ? 0 : 1)}%` : '—';
}

export function int(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : Math.round(n).toLocaleString('en-US');
}

export function ms(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : n < 10 ? `${n.toFixed(2)} ms` : `${Math.round(n)} ms`;
}

export function when(iso: string): string {
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/**
 * A table; each cell carries its column's heading (`data-label`), so that a table with the class `row-cards` becomes one
 * labelled card per row on a phone (app.css) instead of running off the screen.
 */
export function table(head: string[], rows: Node[][], attrs: Attrs = {}): HTMLTableElement {
  return h(
    'table',
    attrs,
    h('thead', {}, h('tr', {}, ...head.map((c) => h('th', {}, c)))),
    h('tbody', {}, ...rows.map((r) => row(head, r))),
  );
}

/** One body row of `table` (also for rows added later, as "Load more" does). */
export function row(head: string[], cells: Node[]): HTMLTableRowElement {
  return h('tr', {}, ...cells.map((c, i) => h('td', { 'data-label': head[i] ?? '' }, c)));
}

export function td(text: string | number, cls?: string): HTMLSpanElement {
  return h('span', { class: cls }, text);
}

export function notice(text: string, kind: 'error' | 'ok' | 'warn' = 'error'): HTMLDivElement {
  return h('div', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}
