/**
 * @module
 * Prompt injection by heuristics: the phrasings that attempts to override a model's instructions keep using (ignore or
 * disregard the previous instructions, reveal the system prompt, a role switch to an unrestricted persona, fake
 * system or end-of-prompt markers). A cheap first line, not a classifier: an operator who wants more names one
 * (`classifier` in the policy).
 */
import { regexDetector } from './match';

const PHRASES = [
  String.raw`\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|every\s+)*(?:previous|prior|above|earlier|preceding|system|original|initial)\s+(?:instructions?|prompts?|rules?|directions?|guidelines?|context)`,
  String.raw`\b(?:reveal|print|show|output|repeat|leak|dump|display)\s+(?:me\s+)?(?:your|the)\s+(?:(?:full|entire|original|hidden|secret|initial)\s+)*(?:system\s+prompt|instructions|hidden\s+prompt|prompt\s+above)`,
  String.raw`\byou\s+are\s+(?:now\s+)?(?:DAN|in\s+developer\s+mode|an?\s+(?:unrestricted|unfiltered|uncensored|jailbroken)\b)`,
  String.raw`\b(?:pretend|act|behave)\s+(?:as\s+if\s+)?(?:you\s+(?:are|have)\s+|like\s+)?(?:no|without)\s+(?:restrictions|rules|filters|guidelines|limitations)`,
  String.raw`\b(?:enable|activate|enter)\s+(?:developer|god|jailbreak|DAN)\s+mode\b`,
  String.raw`(?:<\/?(?:system|im_start|im_end)>|\[\/?INST\]|<\|im_(?:start|end)\|>|###\s*(?:system|new\s+instructions)\s*:)`,
  String.raw`\bnew\s+instructions?\s*:\s*(?:you|from\s+now)`,
  String.raw`\bfrom\s+now\s+on\s*,?\s+you\s+(?:will|must|are\s+to)\s+(?:ignore|disregard|answer\s+without)`,
];

const INJECTION = new RegExp(PHRASES.join('|'), 'gi');

export const injection = regexDetector('prompt_injection', 'INJECTION', INJECTION);
