import type { GatewayError } from '../../errors';
import type { StreamEnd } from '../../stream/chat-stream';
import type { StreamFramer } from '../../stream/sse-writer';
import type { ChatCompletionChunk, ReasoningDetail, Usage } from '../../types/openai';
import type {
  CustomToolCallItem,
  FunctionCallItem,
  InputItem,
  OutputItem,
  OutputMessage,
  ReasoningItem,
  ResponseObject,
} from '../../types/responses';
import { INPUT_ITEMS, type ResponseSaver } from './contract';
import {
  callItem,
  itemId,
  reasoningItem,
  reasoningText,
  responseObject,
  responseUsage,
  statusOf,
  type ResponseMeta,
} from './output';
import { mergeDetails } from './reasoning';

type CallItem = (FunctionCallItem | CustomToolCallItem) & { id: string; status: string };
/** A tool call being streamed: its item, the name and arguments as the model gives them. */
interface OpenCall {
  item: CallItem;
  index: number;
  n: number;
  open: boolean;
  modelName: string;
  args: string;
}
/** A reasoning item being streamed: its text and the provider's details (for encrypted_content). */
interface OpenReasoning {
  item: ReasoningItem;
  index: number;
  text: string;
  details: ReasoningDetail[];
}

/**
 * The Responses event stream from chat chunks: response.created and .in_progress, then
 * per output item .output_item.added, its part and delta events and their .done events,
 * and response.completed (or .incomplete, or .failed followed by an `error` event).
 * Each event is `event: <type>` + `data: <json>` with a rising sequence_number, the
 * framing the openai SDKs parse. Only the first choice is used (Responses has no `n`).
 */
export class ResponsesEvents implements StreamFramer {
  private seq = 0;
  private readonly output: OutputItem[] = [];
  private message: { item: OutputMessage; index: number } | null = null;
  private reasoning: OpenReasoning | null = null;
  private reasoningItems = 0;
  /** Reasoning details that came after other output had begun, with no reasoning item open: a last item holds them. */
  private readonly late: ReasoningDetail[] = [];
  private readonly calls = new Map<number, OpenCall>();
  private usage: Usage | null = null;
  private finish: string | null = null;

  constructor(
    private readonly meta: ResponseMeta,
    private readonly items: InputItem[],
    private readonly saver: ResponseSaver | undefined,
  ) {}

  start(): string {
    const r = this.snapshot('in_progress', null);
    return this.ev('response.created', { response: r }) + this.ev('response.in_progress', { response: r });
  }

  chunk(chunk: ChatCompletionChunk): string {
    if (chunk.choices.length === 0) {
      if (chunk.usage) this.usage = chunk.usage;
      return '';
    }
    let out = '';
    for (const c of chunk.choices) {
      if (c.index !== 0) continue;
      const d = c.delta;
      const thought = reasoningText(d);
      if (thought || d.reasoning_details?.length) out += this.reasoningDelta(thought, d.reasoning_details);
      if (d.content) out += this.textDelta(d.content);
      if (d.refusal) out += this.refusalDelta(d.refusal);
      for (const t of d.tool_calls ?? []) out += this.callDelta(t.index, t.id, t.function?.name, t.function?.arguments);
      if (c.finish_reason) this.finish = c.finish_reason;
    }
    return out;
  }

  async end(end: StreamEnd): Promise<string> {
    const { status, incomplete } = statusOf(this.finish);
    let out = this.closeAll(status === 'completed' ? 'completed' : 'incomplete');
    const r = responseObject(this.meta, this.output, status, responseUsage(this.usage ?? end.usage), { incomplete });
    await this.save(r);
    out += this.ev(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: r });
    return out;
  }

  async error(e: GatewayError): Promise<string> {
    let out = this.closeAll('incomplete');
    const r = responseObject(this.meta, this.output, 'failed', responseUsage(this.usage), { error: e });
    await this.save(r);
    out += this.ev('response.failed', { response: r });
    out += this.ev('error', { code: e.code, message: e.message, param: e.param });
    return out;
  }

  /** The client went away mid-stream: what it was sent so far is kept as an incomplete response. */
  async cancelled(end: StreamEnd): Promise<void> {
    this.closeAll('incomplete');
    await this.save(
      responseObject(this.meta, this.output, 'incomplete', responseUsage(this.usage ?? end.usage), {
        incomplete: { reason: 'client_disconnected' },
      }),
    );
  }

  private async save(r: ResponseObject): Promise<void> {
    await this.saver?.({ ...r, [INPUT_ITEMS]: this.items }, r.status);
  }

  private snapshot(status: 'in_progress', usage: null): ResponseObject {
    return responseObject(this.meta, [], status, usage);
  }

  private ev(type: string, data: Record<string, unknown>): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.seq++, ...data })}\n\n`;
  }

  private add(item: OutputItem): { index: number; text: string } {
    this.output.push(item);
    const index = this.output.length - 1;
    return { index, text: this.ev('response.output_item.added', { output_index: index, item: structuredClone(item) }) };
  }

  private reasoningDelta(delta: string, details: ReasoningDetail[] | undefined): string {
    let out = '';
    if (!this.reasoning && !delta) {
      // Details alone (a signature) open an item only before any other output; later ones wait for the end.
      if (this.output.length > 0) {
        mergeDetails(this.late, details);
        return '';
      }
    }
    if (!this.reasoning) out += this.openReasoning();
    const r = this.reasoning as unknown as OpenReasoning;
    mergeDetails(r.details, details);
    if (!delta) return out;
    const base = { item_id: r.item.id, output_index: r.index };
    if (this.meta.summaries) {
      if (!r.text)
        out += this.ev('response.reasoning_summary_part.added', {
          ...base,
          summary_index: 0,
          part: { type: 'summary_text', text: '' },
        });
      r.text += delta;
      return out + this.ev('response.reasoning_summary_text.delta', { ...base, summary_index: 0, delta });
    }
    if (!r.text)
      out += this.ev('response.content_part.added', {
        ...base,
        content_index: 0,
        part: { type: 'reasoning_text', text: '' },
      });
    r.text += delta;
    return out + this.ev('response.reasoning_text.delta', { ...base, content_index: 0, delta });
  }

  private openReasoning(): string {
    const out = this.closeMessage('completed');
    const n = this.reasoningItems++;
    const item: ReasoningItem = { type: 'reasoning', id: itemId('rs', this.meta.id, n), summary: [] };
    const a = this.add(item);
    this.reasoning = { item, index: a.index, text: '', details: [] };
    return out + a.text;
  }

  private openMessage(): string {
    if (this.message) return '';
    const out = this.closeReasoning();
    const item: OutputMessage = {
      type: 'message',
      id: itemId('msg', this.meta.id),
      status: 'in_progress',
      role: 'assistant',
      content: [],
    };
    const a = this.add(item);
    this.message = { item, index: a.index };
    return out + a.text;
  }

  private textDelta(delta: string): string {
    let out = this.openMessage();
    const m = this.message as { item: OutputMessage; index: number };
    let k = m.item.content.findIndex((p) => p.type === 'output_text');
    if (k < 0) {
      m.item.content.push({ type: 'output_text', text: '', annotations: [], logprobs: [] });
      k = m.item.content.length - 1;
      out += this.ev('response.content_part.added', {
        item_id: m.item.id,
        output_index: m.index,
        content_index: k,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      });
    }
    (m.item.content[k] as { text: string }).text += delta;
    return (
      out +
      this.ev('response.output_text.delta', {
        item_id: m.item.id,
        output_index: m.index,
        content_index: k,
        delta,
        logprobs: [],
      })
    );
  }

  private refusalDelta(delta: string): string {
    let out = this.openMessage();
    const m = this.message as { item: OutputMessage; index: number };
    let k = m.item.content.findIndex((p) => p.type === 'refusal');
    if (k < 0) {
      m.item.content.push({ type: 'refusal', refusal: '' });
      k = m.item.content.length - 1;
      out += this.ev('response.content_part.added', {
        item_id: m.item.id,
        output_index: m.index,
        content_index: k,
        part: { type: 'refusal', refusal: '' },
      });
    }
    (m.item.content[k] as { refusal: string }).refusal += delta;
    return (
      out + this.ev('response.refusal.delta', { item_id: m.item.id, output_index: m.index, content_index: k, delta })
    );
  }

  private callDelta(n: number, callId: string | undefined, name: string | undefined, args: string | undefined): string {
    let out = '';
    let call = this.calls.get(n);
    if (!call) {
      out += this.closeMessage('completed') + this.closeReasoning();
      for (const other of this.calls.values()) out += this.closeCall(other, 'completed');
      const item = callItem(this.meta, n, callId ?? '', name ?? '', '', 'in_progress') as CallItem;
      const a = this.add(item);
      call = { item, index: a.index, n, open: true, modelName: name ?? '', args: '' };
      this.calls.set(n, call);
      out += a.text;
    } else if (name) call.modelName += name;
    if (callId && !call.item.call_id) call.item.call_id = callId;
    if (!args) return out;
    call.args += args;
    if (call.item.type === 'function_call') call.item.arguments += args;
    // A custom tool's input is the one string inside the arguments: it is sent whole when the call is done.
    if (!call.open || call.item.type !== 'function_call') return out;
    return (
      out +
      this.ev('response.function_call_arguments.delta', {
        item_id: call.item.id,
        output_index: call.index,
        delta: args,
      })
    );
  }

  private closeCall(call: OpenCall, status: string): string {
    if (!call.open) return '';
    call.open = false;
    Object.assign(call.item, callItem(this.meta, call.n, call.item.call_id, call.modelName, call.args, status));
    const base = { item_id: call.item.id, output_index: call.index };
    let out: string;
    if (call.item.type === 'custom_tool_call') {
      const input = call.item.input;
      out =
        (input ? this.ev('response.custom_tool_call_input.delta', { ...base, delta: input }) : '') +
        this.ev('response.custom_tool_call_input.done', { ...base, input });
    } else {
      out = this.ev('response.function_call_arguments.done', {
        ...base,
        name: call.item.name,
        arguments: call.item.arguments,
      });
    }
    return out + this.ev('response.output_item.done', { output_index: call.index, item: structuredClone(call.item) });
  }

  private closeMessage(status: OutputMessage['status']): string {
    const m = this.message;
    if (!m) return '';
    this.message = null;
    let out = '';
    m.item.content.forEach((p, k) => {
      const base = { item_id: m.item.id, output_index: m.index, content_index: k };
      out +=
        p.type === 'output_text'
          ? this.ev('response.output_text.done', { ...base, text: p.text, logprobs: [] })
          : this.ev('response.refusal.done', { ...base, refusal: p.refusal });
      out += this.ev('response.content_part.done', { ...base, part: structuredClone(p) });
    });
    m.item.status = status;
    return out + this.ev('response.output_item.done', { output_index: m.index, item: structuredClone(m.item) });
  }

  private closeReasoning(): string {
    const r = this.reasoning;
    if (!r) return '';
    this.reasoning = null;
    Object.assign(r.item, reasoningItem(this.meta, r.item.id, r.text, r.details));
    const base = { item_id: r.item.id, output_index: r.index };
    let out = '';
    if (r.text && this.meta.summaries) {
      const part = { type: 'summary_text', text: r.text };
      out +=
        this.ev('response.reasoning_summary_text.done', { ...base, summary_index: 0, text: r.text }) +
        this.ev('response.reasoning_summary_part.done', { ...base, summary_index: 0, part });
    } else if (r.text) {
      const part = { type: 'reasoning_text', text: r.text };
      out +=
        this.ev('response.reasoning_text.done', { ...base, content_index: 0, text: r.text }) +
        this.ev('response.content_part.done', { ...base, content_index: 0, part });
    }
    return out + this.ev('response.output_item.done', { output_index: r.index, item: structuredClone(r.item) });
  }

  /** Reasoning details that came after the rest of the output: one last reasoning item carries them. */
  private closeLate(): string {
    if (this.late.length === 0) return '';
    let out = this.openReasoning();
    mergeDetails((this.reasoning as OpenReasoning).details, this.late.splice(0));
    out += this.closeReasoning();
    return out;
  }

  private closeAll(status: 'completed' | 'incomplete'): string {
    let out = this.closeReasoning() + this.closeMessage(status);
    for (const call of this.calls.values()) out += this.closeCall(call, status);
    return out + this.closeLate();
  }
}
