import { MockUpstream, sendJson, writeSse, type RecordedRequest } from '../../helpers/mock-upstream';

type Content = { parts?: Array<{ text?: unknown }> };
const bytes = (s: unknown) => (typeof s === 'string' ? Buffer.byteLength(s, 'utf8') : 0);
const textBytes = (c: Content | undefined) => (c?.parts ?? []).reduce((n, p) => n + bytes(p.text), 0);

/**
 * A Gemini upstream (generateContent, streamGenerateContent?alt=sse) that counts the prompt
 * at a token per byte plus 3 per turn, and spends its whole maxOutputTokens allowance
 * (Gemini bills thoughts against it), all of it but one token on thinking.
 */
export function honestGemini(): MockUpstream {
  const up = new MockUpstream();
  up.handler = (req: RecordedRequest, res) => {
    const body = (req.json ?? {}) as {
      contents?: Content[];
      systemInstruction?: Content;
      generationConfig?: { maxOutputTokens?: number };
    };
    const prompt =
      3 + textBytes(body.systemInstruction) + (body.contents ?? []).reduce((n, c) => n + 3 + textBytes(c), 0);
    const max = body.generationConfig?.maxOutputTokens ?? 8192;
    const usageMetadata = {
      promptTokenCount: prompt,
      candidatesTokenCount: 1,
      thoughtsTokenCount: max - 1,
      totalTokenCount: prompt + max,
    };
    const candidate = (text: string, finishReason?: string) => ({
      content: { role: 'model', parts: [{ text: 'hmm', thought: true }, { text }] },
      index: 0,
      ...(finishReason ? { finishReason } : {}),
    });
    if (req.path.includes(':streamGenerateContent')) {
      return writeSse(
        res,
        [{ candidates: [candidate('o')] }, { candidates: [candidate('k', 'MAX_TOKENS')], usageMetadata }],
        { done: false },
      );
    }
    sendJson(res, 200, { candidates: [candidate('ok', 'MAX_TOKENS')], usageMetadata });
  };
  return up;
}
