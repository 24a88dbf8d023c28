/** What the parts of the Accounts & keys page share: the rows they show and the page's state. */
import type { Me } from '../../api';

export interface Account {
  id: string;
  name: string;
  email: string | null;
  credits: number;
  usage: number;
  created_at: string;
  /** Each plugin section's summary of the account's own settings (section name -> text). */
  settings?: Record<string, string>;
}

export interface Key {
  hash: string;
  name: string;
  label: string;
  account_id: string;
  account_name?: string | null;
  limit: number | null;
  limit_remaining: number | null;
  limit_reset: string | null;
  usage: number;
  disabled: boolean;
  expires_at: string | null;
  created_at: string;
  settings?: Record<string, string>;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
  total?: number;
}

/** One list's paging: the cursor of the page shown and those of the pages before it ("Newer" goes back). */
export interface Paging {
  cursor: string | undefined;
  before: Array<string | undefined>;
}

export interface KeysState {
  /** The account whose keys are listed ('' = every account's). */
  filter: string;
  keySearch: string;
  keys: Paging;
  accountSearch: string;
  /** `sort:dir` of the accounts list, e.g. `created:desc`. */
  accountSort: string;
  accounts: Paging;
  /** Account id -> name, of every account seen on this page so far (the keys list names their accounts). */
  names: Map<string, string>;
  /** The settings shown were opened by a link on this page (Close goes Back), not by an address typed or shared. */
  detailFromList: boolean;
}

export interface KeysPage {
  me: Me;
  state: KeysState;
  status: HTMLElement;
  /** Where a key's or an account's settings open. */
  detail: HTMLElement;
  say(text: string, kind?: 'error' | 'ok' | 'warn'): void;
  /** Run a change, say how it went, and draw the lists again. */
  act(fn: () => Promise<unknown>, ok?: string): Promise<void>;
  reload(): Promise<void>;
}
