import type { GatewayError } from '../../errors';
import type { ChatCompletion, ReasoningDetail, Usage } from '../../types/openai';
import type { OutputItem, ReasoningItem, ResponseObject, ResponseStatus, ResponseUsage } from '../../types/responses';
import { encodeDetails, mergeDetails, summariesOf } from './reasoning';
import { customInput, type ToolMap } from './tools';

/** What a response echoes of its request, taken once from the body. */
export type ResponseEcho = Record<string, unknown>;

export function echoOf(body: Record<string, unknown>, previous: string | null): ResponseEcho {
  const text = typeof body.text === 'object' && body.text !== null ? body.text : { format: { type: 'text' } };
  const reasoning = body.reasoning as { effort?: unknown } | undefined;
  return {
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: previous,
    reasoning: {
      effort: reasoning?.effort ?? null,
      summary: (reasoning as { summary?: unknown } | undefined)?.summary ?? null,
    },
    store: body.store !== false,
    temperature: body.temperature ?? 1,
    text,
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    user: body.user ?? null,
  };
}

export interface ResponseMeta {
  id: string;
  model: string;
  createdAt: number;
  echo: ResponseEcho;
  /** The client's tools by the names the model calls them (custom and namespaced tools map back). */
  tools: ToolMap;
  /** The request asked for reasoning summaries: reasoning text is given as the summary. */
  summaries: boolean;
}

/** Chat usage as Responses usage (cost kept). */
export function responseUsage(u: Usage | null | undefined): ResponseUsage | null {
  if (!u) return null;
  return {
    input_tokens: u.prompt_tokens,
    input_tokens_details: { cached_tokens: u.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: u.completion_tokens,
    output_tokens_details: { reasoning_tokens: u.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: u.total_tokens,
    ...(typeof u.cost === 'number' ? { cost: u.cost } : {}),
  };
}

/** A chat finish reason as the response's status and why it is incomplete. */
export function statusOf(finish: string | null | undefined): {
  status: ResponseStatus;
  incomplete: { reason: string } | null;
} {
  if (finish === 'length') return { status: 'incomplete', incomplete: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete: { reason: 'content_filter' } };
  return { status: 'completed', incomplete: null };
}

export function responseObject(
  meta: ResponseMeta,
  output: OutputItem[],
  status: ResponseStatus,
  usage: ResponseUsage | null,
  extra: { incomplete?: { reason: string } | null; error?: GatewayError | null } = {},
): ResponseObject {
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.createdAt,
    status,
    error: extra.error ? { code: extra.error.code, message: extra.error.message } : null,
    incomplete_details: extra.incomplete ?? null,
    model: meta.model,
    output,
    usage,
    ...meta.echo,
  };
}

/** Item ids derive from the response id: msg_<id>, fc_<id>_<n>, ctc_<id>_<n>, rs_<id>, rs_<id>_<n>. */
export function itemId(kind: 'msg' | 'fc' | 'ctc' | 'rs', responseId: string, n = 0): string {
  const base = responseId.replace(/^resp_/, '');
  return kind === 'fc' || kind === 'ctc' || (kind === 'rs' && n > 0) ? `${kind}_${base}_${n}` : `${kind}_${base}`;
}

/**
 * A tool call of the model as the item the client expects: a custom_tool_call (its input taken out of the one
 * argument) for a custom tool, a function_call under the client's own name and namespace otherwise.
 */
export function callItem(
  meta: ResponseMeta,
  n: number,
  callId: string,
  name: string,
  args: string,
  status: string,
): OutputItem {
  const d = meta.tools.byModelName.get(name);
  const ns = d?.namespace ? { namespace: d.namespace } : {};
  if (d?.custom)
    return {
      type: 'custom_tool_call',
      id: itemId('ctc', meta.id, n),
      call_id: callId,
      name: d.name,
      ...ns,
      input: customInput(args),
      status,
    };
  return {
    type: 'function_call',
    id: itemId('fc', meta.id, n),
    call_id: callId,
    name: d?.name ?? name,
    ...ns,
    arguments: args,
    status,
  };
}

/**
 * A reasoning item: the text as `reasoning_text` content, or as the summary when the request asked for summaries
 * (or the provider's own summaries); the provider's reasoning details as encrypted_content, for the next turn.
 */
export function reasoningItem(meta: ResponseMeta, id: string, text: string, details: ReasoningDetail[]): ReasoningItem {
  const given = summariesOf(details);
  const summary = given.length > 0 ? given : meta.summaries && text ? [text] : [];
  const item: ReasoningItem = {
    type: 'reasoning',
    id,
    summary: summary.map((t) => ({ type: 'summary_text' as const, text: t })),
  };
  if (!meta.summaries && text) item.content = [{ type: 'reasoning_text', text }];
  const encrypted = encodeDetails(details);
  if (encrypted) item.encrypted_content = encrypted;
  return item;
}

/** Reasoning text some chat upstreams send beside the answer (`reasoning_content` or `reasoning`). */
export function reasoningText(m: Record<string, unknown>): string {
  const r = m.reasoning_content ?? m.reasoning;
  return typeof r === 'string' ? r : '';
}

/** A plain chat completion (first choice) as the response object. */
export function fromCompletion(c: ChatCompletion, meta: ResponseMeta): ResponseObject {
  const choice = c.choices[0];
  const m = choice?.message;
  const output: OutputItem[] = [];
  const { status, incomplete } = statusOf(choice?.finish_reason);
  const itemStatus = status === 'completed' ? 'completed' : 'incomplete';
  if (m) {
    const reasoning = reasoningText(m);
    const details: ReasoningDetail[] = [];
    mergeDetails(details, m.reasoning_details);
    if (reasoning || details.length > 0) output.push(reasoningItem(meta, itemId('rs', meta.id), reasoning, details));
    const text = typeof m.content === 'string' ? m.content : '';
    const refusal = typeof m.refusal === 'string' ? m.refusal : '';
    if (text || refusal || !m.tool_calls?.length) {
      output.push({
        type: 'message',
        id: itemId('msg', meta.id),
        status: itemStatus,
        role: 'assistant',
        content: refusal
          ? [{ type: 'refusal', refusal }]
          : [{ type: 'output_text', text, annotations: [], logprobs: [] }],
      });
    }
    m.tool_calls?.forEach((t, n) =>
      output.push(callItem(meta, n, t.id, t.function.name, t.function.arguments, 'completed')),
    );
  }
  return responseObject(meta, output, status, responseUsage(c.usage), { incomplete });
}
