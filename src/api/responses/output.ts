import type { GatewayError } from '../../errors';
import type { ChatCompletion, Usage } from '../../types/openai';
import type { OutputItem, ResponseObject, ResponseStatus, ResponseUsage } from '../../types/responses';

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
    reasoning: { effort: reasoning?.effort ?? null, summary: null },
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

/** Item ids derive from the response id: msg_<id>, fc_<id>_<n>, rs_<id>. */
export function itemId(kind: 'msg' | 'fc' | 'rs', responseId: string, n = 0): string {
  const base = responseId.replace(/^resp_/, '');
  return kind === 'fc' ? `fc_${base}_${n}` : `${kind}_${base}`;
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
    if (reasoning)
      output.push({
        type: 'reasoning',
        id: itemId('rs', meta.id),
        summary: [],
        content: [{ type: 'reasoning_text', text: reasoning }],
      });
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
      output.push({
        type: 'function_call',
        id: itemId('fc', meta.id, n),
        call_id: t.id,
        name: t.function.name,
        arguments: t.function.arguments,
        status: 'completed',
      }),
    );
  }
  return responseObject(meta, output, status, responseUsage(c.usage), { incomplete });
}
