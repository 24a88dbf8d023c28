/**
 * @module
 * A request's placeholders: each redacted value gets `[LABEL_n]`, the same value the same placeholder within the
 * request, numbered per label in the order met. Values taken from the input are restored in the answer
 * (rehydration); values redacted from the answer itself are not (the client must not see them). The stored form of
 * a response puts the placeholders back (storedView), unless the operator keeps originals.
 */

/** A placeholder as the redactor writes it: `[EMAIL_1]`, `[CREDIT_CARD_12]`. */
export const PLACEHOLDER = /\[[A-Z][A-Z0-9_]*_\d+\]/g;
/** The longest placeholder a stream may hold back while it is still open (`[` + a label of 32 + `_` + digits). */
export const PLACEHOLDER_MAX = 48;

export class Redactor {
  private readonly byValue = new Map<string, string>();
  /** Placeholder -> the client's original, for the values of the input only. */
  private readonly restorable = new Map<string, string>();
  private readonly counters = new Map<string, number>();

  /** The placeholder of a value; `restore`: it came from the input and comes back in the answer. */
  placeholder(label: string, value: string, restore: boolean): string {
    const known = this.byValue.get(value);
    if (known !== undefined) return known;
    const n = (this.counters.get(label) ?? 0) + 1;
    this.counters.set(label, n);
    const p = `[${label}_${n}]`;
    this.byValue.set(value, p);
    if (restore) this.restorable.set(p, value);
    return p;
  }

  /** Whether any input value was replaced (else there is nothing to restore or keep out of the store). */
  get restores(): boolean {
    return this.restorable.size > 0;
  }

  /** The text with every input placeholder replaced by its original; other bracketed text as it was. */
  rehydrate(text: string): string {
    if (this.restorable.size === 0 || !text.includes('[')) return text;
    return text.replace(PLACEHOLDER, (p) => this.restorable.get(p) ?? p);
  }

  /** A JSON value with every input original replaced by its placeholder, in every string (the stored form). */
  storedView<T>(value: T): T {
    if (this.restorable.size === 0) return value;
    const originals = [...this.restorable].sort((a, b) => b[1].length - a[1].length);
    const redact = (s: string) => {
      let out = s;
      for (const [p, v] of originals) if (out.includes(v)) out = out.split(v).join(p);
      return out;
    };
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return redact(v);
      if (Array.isArray(v)) return v.map(walk);
      if (v !== null && typeof v === 'object')
        return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, walk(x)]));
      return v;
    };
    return walk(value) as T;
  }
}
