import type { GatewayState } from '../../src/pipeline/state';
import type { ModelRegistry } from '../../src/models/registry';
import { inputTokenBound } from '../../src/api/embeddings/encode';
import { maxRequestTokens } from '../credit/bound';

/**
 * The most tokens (prompt + completion, every choice) a request can use: what tokens/min
 * reserves at admission before the real count settles it. The same bound the credit plugin
 * reserves money for (UTF-8 bytes, framing, items, n), on the model's first deployment
 * (limits run before the plan exists); embeddings count their inputs only.
 */
export function tokenBound(s: GatewayState, models: ModelRegistry): number {
  if (s.operation === 'embeddings' && s.embeddings) return inputTokenBound(s.embeddings);
  const first = s.model.deployments[0];
  const provider = models.provider(first.provider);
  return maxRequestTokens(s.request, s.model, provider.type, s.options, { provider, deployment: first });
}
