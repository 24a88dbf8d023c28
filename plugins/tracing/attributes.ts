import type { ChatMessage, GatewayState, Usage } from '../../src/plugin';

type Attrs = Record<string, string | number | boolean | string[]>;

/** GenAI semantic-convention attributes known when the request arrives. */
export function requestAttributes(s: GatewayState): Attrs {
  const r = s.request;
  const a: Attrs = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': s.model.id,
    'gateway.request_id': s.requestId,
  };
  if (typeof r.temperature === 'number') a['gen_ai.request.temperature'] = r.temperature;
  if (typeof r.top_p === 'number') a['gen_ai.request.top_p'] = r.top_p;
  const max = r.max_completion_tokens ?? r.max_tokens;
  if (typeof max === 'number') a['gen_ai.request.max_tokens'] = max;
  if (typeof r.seed === 'number') a['gen_ai.request.seed'] = r.seed;
  if (typeof r.n === 'number') a['gen_ai.request.choice.count'] = r.n;
  if (r.stream === true) a['gen_ai.request.stream'] = true;
  return a;
}

export function usageAttributes(u: Usage | null | undefined): Attrs {
  if (!u) return {};
  const a: Attrs = { 'gen_ai.usage.input_tokens': u.prompt_tokens, 'gen_ai.usage.output_tokens': u.completion_tokens };
  if (typeof u.cost === 'number') a['gateway.usage.cost'] = u.cost;
  return a;
}

export function messagesForSpan(messages: readonly ChatMessage[]): string {
  return JSON.stringify(messages.map((m) => ({ role: m.role, content: m.content })));
}
