/**
 * One field's control in a settings form. A list whose empty list means something of its own (the field's `empty`:
 * an allowlist's "no model") is three choices, not set / these / that, so that an empty input never silently means
 * either (decision 0064); every other field is one input.
 */
import { h } from '../dom';
import { input, parsed, type Field, type Json } from './settings-inputs';

export interface Control {
  /** The id a label points at. */
  id: string;
  el: HTMLElement;
  /** The value to send, or a sentence saying why there is none. */
  read(): Json | Error;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export function control(f: Field, v: Json | undefined, id: string, readOnly: boolean): Control {
  if (!f.empty || (f.type !== 'list' && f.type !== 'numbers')) {
    const el = input(f, v, id, readOnly);
    return { id, el, read: () => parsed(f, el) };
  }
  return threeWay(f, f.empty, v, id, readOnly);
}

function threeWay(f: Field, empty: string, v: Json | undefined, id: string, readOnly: boolean): Control {
  const unset = cap(f.placeholder ?? 'not set');
  const mode = Array.isArray(v) ? (v.length ? 'list' : 'empty') : 'unset';
  const choose = h(
    'select',
    { id, disabled: readOnly, 'data-mode': f.path },
    h('option', { value: 'unset', selected: mode === 'unset' }, `${unset} (not set)`),
    h('option', { value: 'list', selected: mode === 'list' }, 'Only these:'),
    h('option', { value: 'empty', selected: mode === 'empty' }, `${cap(empty)} (an empty list)`),
  );
  const list = input({ ...f, placeholder: 'separated by commas' }, v, `${id}-list`, readOnly);
  list.setAttribute('aria-label', `${f.label}: the list`);
  const sync = () => (list.hidden = choose.value !== 'list');
  choose.addEventListener('change', () => (sync(), choose.value === 'list' && list.focus()));
  sync();
  const read = (): Json | Error => {
    if (choose.value === 'unset') return null;
    if (choose.value === 'empty') return [];
    const got = parsed(f, list);
    if (got === null) return new Error(`${f.label}: list at least one, or choose "${unset}" or "${cap(empty)}"`);
    return got;
  };
  return { id, el: h('span', { class: 'three-way' }, choose, list), read };
}
