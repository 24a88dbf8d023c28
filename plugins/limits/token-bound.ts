import { promptTokens, type GatewayState } from '../../src/pipeline/state';

/**
 * The most tokens (prompt + completion, every choice) a request can use: what tokens/min
 * reserves at admission before the real count settles it. The one place to swap for the
 * credit plugin's bound once both exist.
 */
export function tokenBound(s: GatewayState): number {
  const prompt = promptTokens(s);
  const r = s.request;
  const asked = r.max_completion_tokens ?? r.max_tokens;
  const room = Math.max(0, s.model.context_length - prompt);
  const completion = typeof asked === 'number' && asked >= 0 ? Math.min(asked, room) : Math.min(s.model.max_output_tokens ?? room, room);
  const n = typeof r.n === 'number' && r.n > 0 ? r.n : 1;
  return prompt + completion * n;
}
