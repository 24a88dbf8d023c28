import type { ReasoningDetail } from '../../types/openai';

/**
 * A reasoning item's `encrypted_content` as the gateway writes it: `gw1.` then the chat reasoning_details (thinking
 * text with its Anthropic signature, Gemini thought signatures, redacted thinking) as base64url JSON. It is opaque to
 * the client, not encrypted: the signatures inside are the provider's own protection. Sent back, it becomes the
 * reasoning_details of the assistant turn it belongs to, so the provider gets its thinking back unchanged.
 */
const PREFIX = 'gw1.';

/** The format OpenAI gives its own encrypted reasoning, for content the gateway did not write (no adapter reads it). */
const FOREIGN_FORMAT = 'openai-responses-v1';

export function encodeDetails(details: ReasoningDetail[]): string | null {
  return details.length === 0 ? null : PREFIX + Buffer.from(JSON.stringify(details)).toString('base64url');
}

export function decodeDetails(encrypted: unknown): ReasoningDetail[] {
  if (typeof encrypted !== 'string' || encrypted.length === 0) return [];
  if (!encrypted.startsWith(PREFIX)) return [{ type: 'reasoning.encrypted', data: encrypted, format: FOREIGN_FORMAT }];
  try {
    const v: unknown = JSON.parse(Buffer.from(encrypted.slice(PREFIX.length), 'base64url').toString('utf8'));
    return Array.isArray(v)
      ? v.filter((d): d is ReasoningDetail => typeof d === 'object' && d !== null && typeof d.type === 'string')
      : [];
  } catch {
    return [];
  }
}

/**
 * Streamed reasoning details into whole ones: pieces of one detail (same type, format and index) are joined, text
 * and data appended, the signature kept.
 */
export function mergeDetails(into: ReasoningDetail[], more: ReasoningDetail[] | undefined): void {
  for (const d of more ?? []) {
    const same =
      d.index === undefined
        ? undefined
        : into.find((x) => x.index === d.index && x.type === d.type && x.format === d.format);
    if (!same) {
      into.push({ ...d });
      continue;
    }
    if (typeof d.text === 'string') same.text = (same.text ?? '') + d.text;
    if (typeof d.summary === 'string') same.summary = (same.summary ?? '') + d.summary;
    if (typeof d.data === 'string') same.data = (same.data ?? '') + d.data;
    if (typeof d.signature === 'string' && d.signature) same.signature = d.signature;
    if (d.id) same.id = d.id;
  }
}

/** The summaries a provider gave (OpenRouter's `reasoning.summary` details). */
export function summariesOf(details: ReasoningDetail[]): string[] {
  return details
    .filter((d) => d.type === 'reasoning.summary' && typeof d.summary === 'string')
    .map((d) => d.summary as string);
}

/** Whether the request asked for reasoning summaries (`reasoning.summary`: auto, concise or detailed). */
export function summaryAsked(body: Record<string, unknown>): boolean {
  const r = body.reasoning;
  if (typeof r !== 'object' || r === null) return false;
  const s =
    (r as { summary?: unknown; generate_summary?: unknown }).summary ??
    (r as { generate_summary?: unknown }).generate_summary;
  return typeof s === 'string' && s !== 'none';
}
