/**
 * @module
 * Where a request's and an answer's texts are, for the checks to read and rewrite in place: a chat request's
 * message contents (strings and text parts) and tool-call arguments, in the request and in every attempt of the plan
 * (a fallback's copy shares or copies the messages); an embeddings request's strings; a completion's choices.
 */
import type { ChatCompletion, ChatMessage, GatewayState } from '../../src/plugin';

type Rewrite = (text: string) => string;

function message(m: ChatMessage, fn: Rewrite): void {
  if (typeof m.content === 'string') m.content = fn(m.content);
  else if (Array.isArray(m.content))
    for (const part of m.content)
      if (part.type === 'text' && typeof (part as { text?: unknown }).text === 'string')
        (part as { text: string }).text = fn((part as { text: string }).text);
  for (const t of m.tool_calls ?? []) t.function.arguments = fn(t.function.arguments);
}

/** Every input text of the request, each message once however many attempts share it. */
export function rewriteInput(s: GatewayState, fn: Rewrite): void {
  if (s.operation === 'embeddings') {
    const input = s.embeddings?.input;
    if (input)
      for (let i = 0; i < input.length; i++) if (typeof input[i] === 'string') input[i] = fn(input[i] as string);
    return;
  }
  const seen = new Set<ChatMessage>();
  const requests = [s.request, ...(s.plan?.attempts ?? []), ...(s.plan?.contextFallback ?? [])].map((r) =>
    'messages' in r ? r : r.request,
  );
  for (const r of requests)
    for (const m of r.messages ?? [])
      if (!seen.has(m)) {
        seen.add(m);
        message(m, fn);
      }
}

/** The request's texts joined, for the classifier (after redaction: it sees placeholders, not values). */
export function inputText(s: GatewayState, max: number): string {
  const parts: string[] = [];
  if (s.operation === 'embeddings') for (const x of s.embeddings?.input ?? []) if (typeof x === 'string') parts.push(x);
  for (const m of s.request.messages ?? []) {
    if (m.role === 'system' || m.role === 'developer') continue;
    message(m, (t) => (parts.push(t), t));
  }
  return parts.join('\n\n').slice(0, max);
}

/**
 * A completion's answer as the client gets it: the same body when no text changed, else a copy with the changed
 * messages (the original, which a deferred store write may hold, keeps what the upstream said).
 */
export function rewriteCompletion(body: ChatCompletion, fn: Rewrite): ChatCompletion {
  let changed = false;
  const track: Rewrite = (t) => {
    const r = fn(t);
    if (r !== t) changed = true;
    return r;
  };
  const choices = body.choices.map((c) => {
    const m = c.message;
    const copy: typeof m = { ...m };
    if (Array.isArray(m.content)) copy.content = m.content.map((p) => ({ ...p }));
    if (m.tool_calls) copy.tool_calls = m.tool_calls.map((t) => ({ ...t, function: { ...t.function } }));
    message(copy, track);
    return { ...c, message: copy };
  });
  return changed ? { ...body, choices } : body;
}
