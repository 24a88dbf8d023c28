/**
 * @module
 * Admin sections: how a plugin offers its settings to the operator console (and to any other admin front end) without
 * either importing the other (decision 0048). A plugin registers a section in the `admin.sections` slot: its name, the
 * subjects it is about (a key, an account, the gateway as a whole, or named items of its own such as presets), the
 * form's fields, the JSON Schema of its value, and the functions that read and write it. The console lists the
 * sections, draws their forms from the fields and serves them under `/console/api/settings/...` with its session, role
 * checks, CSRF and audit; the plugin's own `/v1` admin routes call the same functions.
 */
import type { Principal, Role } from '../pipeline/state';
import type { SharedServices } from '../pipeline/shared-services';

/**
 * What one value of a section is about: `key` (by its full hash) and `account` (by id), which the host checks exist
 * before it calls the section; `gateway` (one value for the whole gateway, id `-`); `item` (named items the section
 * keeps itself, listed by `list`; the section answers 404 for a name it does not have).
 */
export type SectionSubject = 'key' | 'account' | 'gateway' | 'item';

/**
 * One input of a section's form. `path` is where the value sits in the section's JSON, dot-separated
 * (`rate_limits.rpm`). How the form shows and reads it:
 * - `integer`, `number`: a number; empty means null (inherit, or not set);
 * - `boolean`: a checkbox; `choice`: one of `choices`, sent as it is (`true` stays a boolean; empty: null);
 * - `text`: a line of text (empty: null); `list`: strings separated by commas (empty: null);
 * - `numbers`: numbers separated by commas (empty: null); `json`: any JSON value typed as JSON (empty: null).
 * A nested object whose every field is empty is sent as null.
 */
export interface SettingsField {
  path: string;
  label: string;
  type: 'integer' | 'number' | 'boolean' | 'choice' | 'text' | 'list' | 'numbers' | 'json';
  /** One line under the input: what the value does, what empty means. */
  help?: string;
  /** What an empty input shows (what empty means: `inherit`, `every model`). */
  placeholder?: string;
  /**
   * A `list` or `numbers` field whose empty list (`[]`) means something other than not set (null): what it means
   * (`no model`, `no notice`). The console then offers not set (the placeholder), a list, and this as three choices,
   * and refuses a list chosen but left empty, so that an empty input never silently means either (decision 0064).
   */
  empty?: string;
  choices?: readonly (string | number | boolean)[];
  min?: number;
  max?: number;
  /** The subjects the field is shown for (default: every subject of its section). */
  subjects?: readonly SectionSubject[];
}

/** Who asks, and from where: the section may keep its own record (the host writes the audit row). */
export interface SectionCaller {
  principal: Principal;
}

/** A named action of a section (a cache purge): a form of its own, run by `run` with the checked body. */
export interface SectionAction {
  title: string;
  description?: string;
  fields: readonly SettingsField[];
  /** The least role to run it (default `operator`). */
  role?: Role;
  /** Check `body` (a 400 GatewayError naming the field, nothing done), do it, answer what was done. */
  run(body: unknown, caller: SectionCaller): Promise<unknown>;
}

/**
 * A read-only list a section shows (decision 0054): the mcp plugin's servers, its call log. Filters are described as
 * form fields; `read` gets their values as strings (and `cursor`, the `next` of the previous page) and checks them.
 * Reading changes nothing, so nothing is audited.
 */
export interface SectionView {
  title: string;
  description?: string;
  filters: readonly SettingsField[];
  /** The least role to read it (default: the section's read role). */
  role?: Role;
  read(
    query: Readonly<Record<string, string>>,
    caller: SectionCaller,
  ): Promise<{ data: unknown[]; next: string | null }>;
}

export interface AdminSection {
  /** Its place in URLs and audit actions: lower case letters, digits and `-`, unique. */
  name: string;
  title: string;
  description?: string;
  subjects: readonly SectionSubject[];
  fields: readonly SettingsField[];
  /** JSON Schema of the value `write` accepts (what `read` answers), for clients other than the form. */
  schema: object;
  /**
   * The least role to read (default `viewer`; with that default an account's own session may also read its own key's
   * and account's values, a higher one keeps them from it) and to write (default `operator`).
   */
  roles?: { read?: Role; write?: Role };
  /** The audit action's prefix (`<audit>.set`, `<audit>.delete`, `<audit>.<action>`); default `name`. */
  audit?: string;
  /** The value for one subject (key and account: the host checked they exist). */
  read(subject: SectionSubject, id: string): Promise<unknown>;
  /**
   * Check `body` whole first (a 400 GatewayError naming the field when anything is wrong: nothing is written), then
   * write it and answer the value as `read` now would.
   */
  write(subject: SectionSubject, id: string, body: unknown, caller: SectionCaller): Promise<unknown>;
  /** Delete an item (subject `item`); false when there is none of that name. */
  remove?(subject: SectionSubject, id: string, caller: SectionCaller): Promise<boolean>;
  /** The items of subject `item`: each with its `id` (its name) and its value. */
  list?(): Promise<Array<{ id: string; value: unknown }>>;
  /**
   * A short text per subject for list columns (the console's keys and accounts lists), for the ids of one page;
   * a subject with nothing of its own set may be left out.
   */
  summarize?(subject: 'key' | 'account', ids: readonly string[]): Promise<Map<string, string>>;
  actions?: Readonly<Record<string, SectionAction>>;
  views?: Readonly<Record<string, SectionView>>;
}

/** The sections registered so far, in registration order (the chain's order). */
export interface AdminSections {
  /** Throws when the name is taken or not URL-safe (a start-up error, naming the section). */
  register(section: AdminSection): void;
  get(name: string): AdminSection | undefined;
  list(): readonly AdminSection[];
}
export const ADMIN_SECTIONS = 'admin.sections';

const NAME = /^[a-z][a-z0-9-]{0,39}$/;

/** The registry in `shared` (made by the first plugin that asks: the one that registers or the one that lists). */
export function adminSections(shared: SharedServices): AdminSections {
  const found = shared.get(ADMIN_SECTIONS);
  if (found) return found;
  const byName = new Map<string, AdminSection>();
  const made: AdminSections = {
    register(s) {
      if (!NAME.test(s.name)) throw new Error(`admin section name '${s.name}' is not [a-z][a-z0-9-]*`);
      if (byName.has(s.name)) throw new Error(`admin section '${s.name}' is registered twice`);
      byName.set(s.name, s);
    },
    get: (name) => byName.get(name),
    list: () => [...byName.values()],
  };
  shared.set(ADMIN_SECTIONS, made);
  return made;
}
