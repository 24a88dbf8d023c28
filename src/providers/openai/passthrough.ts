import type { ChatCompletionChunk } from '../../types/openai';
import { STAMPABLE_FIELDS, withChatFrame, type ChatFrame } from '../same-wire';

/**
 * A chat chunk read without a parse (docs/decisions/0035-chat-stream-passthrough.md): only a chunk of the shape most
 * of a stream is made of, one choice whose delta carries `content` alone (a string or null), no finish reason, no
 * usage, no error, is read here, by a walk over its compact JSON that jumps from quote to quote (native searches)
 * and never builds the object; it gives the gateway's view of the chunk (index, content) and the frame to forward:
 * the upstream's own JSON with only the top-level `id` and `model` replaced (the gateway's completion id and the
 * model the client asked for, as on every answer) and `"usage":null` added when the upstream left it out (spec 4.1).
 * Anything else (the role chunk, tool calls, reasoning, refusals, logprobs, the finish and usage chunks, nested
 * values the gateway does not know, whitespace between tokens) is undefined here and goes through the full parse
 * and translation, as before. What is not checked: a JSON text that is malformed inside a number or a literal, or
 * that repeats a key, reaches the client as the upstream sent it (what a proxy does).
 */

export interface PassthroughIds {
  /** The gateway's completion id (no character in it needs escaping in JSON). */
  id: string;
  /** The client's model id. */
  model: string;
  /** The same, as the content of a JSON string. */
  modelJson: string;
}

/** What a walk read of a chunk; reused by one translator (a stream reads one event at a time). */
class Walk {
  d = '';
  /** The text has a backslash somewhere: strings need the escape-aware end. */
  escapes = false;
  idFrom = -1;
  idTo = -1;
  modelFrom = -1;
  modelTo = -1;
  created = Number.NaN;
  object = false;
  usage = false;
  index = -1;
  content: string | null | undefined = undefined;
  /** Where a string content's text is in `d` (from its first character to its closing quote). */
  contentFrom = -1;
  contentTo = -1;

  reset(d: string): void {
    this.d = d;
    this.escapes = d.indexOf('\\') >= 0;
    this.idFrom = this.idTo = this.modelFrom = this.modelTo = this.index = -1;
    this.created = Number.NaN;
    this.object = this.usage = false;
    this.content = undefined;
    this.contentFrom = this.contentTo = -1;
  }

  /** The index of the quote that closes the string whose text starts at `from`; -1 if none. */
  stringEnd(from: number): number {
    const d = this.d;
    let q = d.indexOf('"', from);
    if (!this.escapes) return q;
    while (q > 0 && d.charCodeAt(q - 1) === 92) {
      let slashes = 1;
      while (d.charCodeAt(q - 1 - slashes) === 92) slashes++;
      if (slashes % 2 === 0) break;
      q = d.indexOf('"', q + 1);
    }
    return q;
  }

  /** The index after a number or a literal (true, false, null) that starts at `from`. */
  literalEnd(from: number): number {
    const d = this.d;
    let e = from;
    for (let c = d.charCodeAt(e); c !== 44 && c !== 125 && c !== 93 && e < d.length; c = d.charCodeAt(++e));
    return e;
  }

  /** An object's members from `i` (just after its `{`), each given to `member`; the index after its `}`, or -1. */
  members(i: number, member: (keyFrom: number, keyTo: number, value: number) => number): number {
    const d = this.d;
    if (d.charCodeAt(i) === 125) return i + 1;
    for (;;) {
      if (d.charCodeAt(i) !== 34) return -1;
      const keyTo = this.stringEnd(i + 1);
      if (keyTo < 0 || d.charCodeAt(keyTo + 1) !== 58) return -1;
      const next = member(i + 1, keyTo, keyTo + 2);
      if (next < 0) return -1;
      const sep = d.charCodeAt(next);
      if (sep === 125) return next + 1;
      if (sep !== 44) return -1;
      i = next + 1;
    }
  }

  /** A value the chunk's gateway view does not need: a string or a literal, skipped; nested, -1 (full parse). */
  skip(v: number): number {
    const c = this.d.charCodeAt(v);
    if (c === 34) {
      const e = this.stringEnd(v + 1);
      return e < 0 ? -1 : e + 1;
    }
    return c === 123 || c === 91 ? -1 : this.literalEnd(v);
  }

  isNull(v: number): boolean {
    return this.d.startsWith('null', v) && this.literalEnd(v) === v + 4;
  }

  /** Whether the key in d[from, to) is `name`: its length, then its first two characters, then the rest. */
  key(from: number, to: number, name: string): boolean {
    const d = this.d;
    return (
      to - from === name.length &&
      d.charCodeAt(from) === name.charCodeAt(0) &&
      d.charCodeAt(from + 1) === name.charCodeAt(1) &&
      (name.length === 2 || d.startsWith(name, from))
    );
  }

  /** A top-level member: dispatched on the key's length first (most keys are skipped). */
  readonly top = (from: number, to: number, v: number): number => {
    const d = this.d;
    switch (to - from) {
      case 2:
        return this.key(from, to, 'id') ? this.idOrModel(v, true) : this.skip(v);
      case 5:
        if (this.key(from, to, 'model')) return this.idOrModel(v, false);
        if (this.key(from, to, 'usage')) {
          this.usage = true;
          return this.isNull(v) ? v + 4 : -1;
        }
        return this.key(from, to, 'error') ? -1 : this.skip(v);
      case 8:
        // A field the gateway stamps on every chunk itself (STAMPABLE_FIELDS): left to the full parse.
        return this.key(from, to, STAMPABLE_FIELDS[0]) ? -1 : this.skip(v);
      case 6:
        if (!this.key(from, to, 'object')) return this.skip(v);
        this.object = d.startsWith('"chat.completion.chunk"', v);
        return this.object ? v + 23 : -1;
      case 7:
        if (this.key(from, to, 'choices'))
          return d.charCodeAt(v) === 91 && d.charCodeAt(v + 1) === 123 ? this.choice(v + 2) : -1;
        if (this.key(from, to, 'created')) {
          const e = this.literalEnd(v);
          this.created = Number(d.slice(v, e));
          return e;
        }
        return this.skip(v);
      default:
        return this.skip(v);
    }
  };

  /** The top-level `id` or `model`: where its text is (one with an escape is left to the full parse). */
  idOrModel(v: number, id: boolean): number {
    const d = this.d;
    if (d.charCodeAt(v) !== 34) return -1;
    const e = this.stringEnd(v + 1);
    if (e < 0 || (this.escapes && d.lastIndexOf('\\', e) > v)) return -1;
    if (id) {
      this.idFrom = v + 1;
      this.idTo = e;
    } else {
      this.modelFrom = v + 1;
      this.modelTo = e;
    }
    return e + 1;
  }

  /** The one choice, from just after `[{`: the index after its `]`, or -1. */
  choice(i: number): number {
    const end = this.members(i, this.choiceMember);
    return end > 0 && this.d.charCodeAt(end) === 93 ? end + 1 : -1;
  }

  readonly choiceMember = (from: number, to: number, v: number): number => {
    const d = this.d;
    if (this.key(from, to, 'index')) {
      const e = this.literalEnd(v);
      this.index = Number(d.slice(v, e));
      return Number.isInteger(this.index) && this.index >= 0 ? e : -1;
    }
    if (this.key(from, to, 'delta')) return d.charCodeAt(v) === 123 ? this.members(v + 1, this.deltaMember) : -1;
    if (this.key(from, to, 'finish_reason') || this.key(from, to, 'logprobs')) return this.isNull(v) ? v + 4 : -1;
    return this.skip(v);
  };

  readonly deltaMember = (from: number, to: number, v: number): number => {
    const d = this.d;
    if (this.key(from, to, 'refusal')) return this.isNull(v) ? v + 4 : -1;
    if (!this.key(from, to, 'content')) return -1;
    if (this.isNull(v)) {
      this.content = null;
      return v + 4;
    }
    if (d.charCodeAt(v) !== 34) return -1;
    const e = this.stringEnd(v + 1);
    if (e < 0) return -1;
    this.contentFrom = v + 1;
    this.contentTo = e;
    if (!this.escapes || d.lastIndexOf('\\', e) <= v) this.content = d.slice(v + 1, e);
    else {
      try {
        this.content = JSON.parse(d.slice(v, e + 1)) as string;
      } catch {
        return -1;
      }
    }
    return e + 1;
  };
}

/**
 * A chunk of a stream that differs from one read before only in its content's text: the text before and after it,
 * in the upstream's event and in the frame. An upstream writes every content chunk of a stream alike, so most are
 * matched by two comparisons (startsWith, endsWith) instead of a walk.
 */
interface Template {
  prefix: string;
  suffix: string;
  framePrefix: string;
  frameSuffix: string;
  created: number;
  index: number;
}

/** The text of a JSON string's body `raw`, or undefined when it is not one body (an unescaped quote) or is invalid. */
function stringBody(raw: string): string | undefined {
  if (raw.indexOf('\\') < 0) return raw.indexOf('"') < 0 ? raw : undefined;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined;
  }
}

/** Reads chunks without a parse for one stream (see the module's comment). */
export class PassthroughReader {
  private readonly walk = new Walk();
  private template: Template | null = null;
  /** The run the last read made or joined, while the next read may join it. */
  private run: TemplateRun | null = null;

  constructor(
    private readonly ids: PassthroughIds,
    private readonly full: (data: string) => ChatCompletionChunk,
  ) {}

  /** No later read joins the chunk read last (its reader may have it). */
  endRun(): void {
    this.run = null;
  }

  /**
   * The gateway's chunk for the upstream event `d`, carrying its frame; undefined when it needs the full parse. With
   * `join`, a chunk that differs from the one read just before (not since handed on: see endRun) only in its text
   * joins it instead, as a run (docs/decisions/0065-text-runs.md): null.
   */
  read(d: string, join = false): ChatCompletionChunk | null | undefined {
    const run = join ? this.run : null;
    this.run = null;
    const t = this.template;
    // Slices compared, not startsWith/endsWith: on the sliced strings a parser makes, V8 (node 20) took ~20x longer.
    const tail = t === null ? -1 : d.length - t.suffix.length;
    if (
      t !== null &&
      tail >= t.prefix.length &&
      d.slice(0, t.prefix.length) === t.prefix &&
      d.slice(tail) === t.suffix
    ) {
      const raw = d.slice(t.prefix.length, tail);
      const content = stringBody(raw);
      if (content !== undefined) {
        if (run !== null && run.t === t) {
          run.add(raw, content);
          this.run = run;
          return null;
        }
        const c = this.chunkOf(t.created, t.index, content);
        const frame = new TemplateRun(t, raw, c.choices[0].delta, this.full);
        withChatFrame(c, frame);
        this.run = frame;
        return c;
      }
    }
    return this.walked(d);
  }

  private walked(d: string): ChatCompletionChunk | undefined {
    const w = this.walk;
    const n = d.length;
    if (n < 16 || d.charCodeAt(0) !== 123 || d.charCodeAt(n - 1) !== 125) return undefined;
    w.reset(d);
    if (w.members(1, w.top) !== n || w.idFrom < 0 || w.modelFrom < 0 || !w.object || w.index < 0) return undefined;
    if (!Number.isInteger(w.created)) return undefined;
    const ids = this.ids;
    const idFirst = w.idFrom < w.modelFrom;
    const head =
      'data: ' +
      d.slice(0, idFirst ? w.idFrom : w.modelFrom) +
      (idFirst ? ids.id : ids.modelJson) +
      d.slice(idFirst ? w.idTo : w.modelTo, idFirst ? w.modelFrom : w.idFrom) +
      (idFirst ? ids.modelJson : ids.id);
    const restFrom = idFirst ? w.modelTo : w.idTo;
    // The frame without its closing `}\n\n`, so that stamped fields can go at its end.
    const text = head + (w.usage ? d.slice(restFrom, n - 1) : `${d.slice(restFrom, n - 1)},"usage":null`);
    if (w.contentFrom > restFrom) {
      // The ids come before the content: later chunks that differ only in their text match this one.
      const at = head.length + (w.contentFrom - restFrom);
      const end = at + (w.contentTo - w.contentFrom);
      this.template = {
        prefix: d.slice(0, w.contentFrom),
        suffix: d.slice(w.contentTo),
        framePrefix: text.slice(0, at),
        frameSuffix: text.slice(end),
        created: w.created,
        index: w.index,
      };
    }
    const content = w.content;
    w.d = '';
    return this.chunk(text, d, w.created, w.index, content);
  }

  private chunk(
    /** The frame without its closing `}\n\n`. */
    body: string,
    d: string,
    created: number,
    index: number,
    content: string | null | undefined,
  ): ChatCompletionChunk {
    const chunk = this.chunkOf(created, index, content);
    withChatFrame(chunk, new LazyChunk(body, d, this.full));
    return chunk;
  }

  private chunkOf(created: number, index: number, content: string | null | undefined): ChatCompletionChunk {
    return {
      id: this.ids.id,
      object: 'chat.completion.chunk',
      created,
      model: this.ids.model,
      choices: [{ index, delta: content === undefined ? {} : { content }, finish_reason: null }],
      usage: null,
    };
  }
}

/**
 * The frame of a chunk read by its template, and of those that joined it (a run): each chunk's text as the upstream
 * wrote it, between the template's frame prefix and suffix; its chunk's content is their texts joined.
 */
class TemplateRun implements ChatFrame {
  private readonly raws: string[];
  count: number | undefined = undefined;

  constructor(
    readonly t: Template,
    raw: string,
    private readonly delta: { content?: string | null },
    private readonly make: (data: string) => ChatCompletionChunk,
  ) {
    this.raws = [raw];
  }

  add(raw: string, content: string): void {
    this.count = this.raws.push(raw);
    this.delta.content += content;
  }

  get frame(): string {
    return this.frameWith('');
  }

  frameWith(extra: string): string {
    const { raws, t } = this;
    const head = t.framePrefix;
    const end = t.frameSuffix + extra + '}\n\n';
    let s = '';
    for (let i = 0; i < raws.length; i++) s += head + raws[i] + end;
    return s;
  }

  full(): ChatCompletionChunk {
    return this.make(this.t.prefix + this.raws[0] + this.t.suffix);
  }

  parts(): ChatFrame[] {
    const t = this.t;
    return this.raws.map(
      (raw) => new LazyChunk(t.framePrefix + raw + t.frameSuffix, t.prefix + raw + t.suffix, this.make),
    );
  }
}

/** The frame, and the full chunk made only when asked for. */
class LazyChunk implements ChatFrame {
  constructor(
    private readonly body: string,
    private readonly data: string,
    private readonly make: (data: string) => ChatCompletionChunk,
  ) {}

  get frame(): string {
    return this.body + '}\n\n';
  }

  frameWith(extra: string): string {
    return this.body + extra + '}\n\n';
  }

  full(): ChatCompletionChunk {
    return this.make(this.data);
  }
}
