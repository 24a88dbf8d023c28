/**
 * @module
 * Prompt injection by heuristics: the phrasings that attempts to override a model's instructions keep using (ignore or
 * disregard the previous instructions, reveal the system prompt, a role switch to an unrestricted persona, fake
 * system or end-of-prompt markers). A cheap first line, not a classifier: an operator who wants more names one
 * (`classifier` in the policy). Each phrasing runs only when a word it must contain is in the text.
 */
import type { Detector, DetectorMatch } from '../../../src/plugin';
import { KeywordIndex } from './keywords';
import { matchAll } from './match';

const PHRASES: Array<{ keywords: string[]; re: string }> = [
  {
    keywords: ['ignore', 'disregard', 'forget', 'override', 'bypass'],
    re: String.raw`\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|every\s+)*(?:previous|prior|above|earlier|preceding|system|original|initial)\s+(?:instructions?|prompts?|rules?|directions?|guidelines?|context)`,
  },
  {
    keywords: ['prompt', 'instructions'],
    re: String.raw`\b(?:reveal|print|show|output|repeat|leak|dump|display)\s+(?:me\s+)?(?:your|the)\s+(?:(?:full|entire|original|hidden|secret|initial)\s+)*(?:system\s+prompt|instructions|hidden\s+prompt|prompt\s+above)`,
  },
  {
    keywords: ['dan', 'developer', 'unrestricted', 'unfiltered', 'uncensored', 'jailbroken'],
    re: String.raw`\byou\s+are\s+(?:now\s+)?(?:DAN|in\s+developer\s+mode|an?\s+(?:unrestricted|unfiltered|uncensored|jailbroken)\b)`,
  },
  {
    keywords: ['restrictions', 'rules', 'filters', 'guidelines', 'limitations'],
    re: String.raw`\b(?:pretend|act|behave)\s+(?:as\s+if\s+)?(?:you\s+(?:are|have)\s+|like\s+)?(?:no|without)\s+(?:restrictions|rules|filters|guidelines|limitations)`,
  },
  { keywords: ['mode'], re: String.raw`\b(?:enable|activate|enter)\s+(?:developer|god|jailbreak|DAN)\s+mode\b` },
  {
    keywords: ['system>', 'im_start', 'im_end', 'inst]', '###'],
    re: String.raw`(?:<\/?(?:system|im_start|im_end)>|\[\/?INST\]|<\|im_(?:start|end)\|>|###\s*(?:system|new\s+instructions)\s*:)`,
  },
  { keywords: ['instruction'], re: String.raw`\bnew\s+instructions?\s*:\s*(?:you|from\s+now)` },
  {
    keywords: ['from'],
    re: String.raw`\bfrom\s+now\s+on\s*,?\s+you\s+(?:will|must|are\s+to)\s+(?:ignore|disregard|answer\s+without)`,
  },
];

const COMPILED = PHRASES.map((p) => ({ keywords: p.keywords, re: new RegExp(p.re, 'gi') }));
const INDEX = new KeywordIndex(COMPILED.flatMap((p) => p.keywords));
const PHRASE_OF = COMPILED.flatMap((p) => p.keywords.map(() => p));

function find(text: string): DetectorMatch[] {
  const phrases = new Set<(typeof COMPILED)[number]>();
  for (const k of INDEX.found(text.toLowerCase())) phrases.add(PHRASE_OF[k]);
  const out: DetectorMatch[] = [];
  for (const p of phrases) out.push(...matchAll(p.re, text));
  return out.sort((a, b) => a.start - b.start);
}

export const injection: Detector = { id: 'prompt_injection', label: 'INJECTION', find };
