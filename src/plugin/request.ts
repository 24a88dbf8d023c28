/**
 * The public plugin API, part "the request": its fields, its tokens and bounds, its attempt plan, its end. Re-exports
 * only (nothing here runs per request); import it from `model-gateway/plugin` (built-ins: `../../src/plugin`).
 */
export { combine, GATEWAY_FIELDS, ownSafeKeys, PROTOTYPE_KEYS } from '../api/chat-request';
export { promptTokens } from '../pipeline/state';
export { defaultPlan, deploymentOrder, requestPreferences, type PlanInputs } from '../pipeline/plan';
export { fixPlan } from '../pipeline/request-state';
export { RequestAbort, type AbortLike } from '../pipeline/request-abort';
export { countPromptTokens, countTextTokens, messageText, promptTokensAtMost } from '../tokens/count';
export { maxRequestTokens, requestTokenBound, worstCase, type BoundTarget, type TokenBound } from '../tokens/bound';
export { deploymentPricing } from '../models/pricing';
export { presetSchema } from '../config/schema';
export { PresetBook, PRESETS, type ListedPreset } from '../models/presets';
export { billedFeatureProblem, featureCharges, type FeatureCharges } from '../models/billed-features';
export { reasoningAsk, type ReasoningAsk } from '../providers/reasoning';
export { inputTokenBound, toEmbeddingsResponse } from '../api/embeddings/encode';
export { hasContent } from '../stream/sse-writer';
export { PROMPT_FIELDS, type PromptOptions } from '../prompt/index';
export type { EmbeddingsRequest, EmbeddingsResponse } from '../types/embeddings';
export type { FunctionTool, ToolChoice } from '../types/openai';
