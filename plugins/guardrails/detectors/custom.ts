/**
 * @module
 * The operator's own rules from YAML: a regex (JavaScript syntax, flags `i`, `m`, `s`, `u` allowed) or a word list
 * (whole words, case-insensitive), each a detector under the id it is given.
 */
import type { Detector } from '../../../src/plugin';
import { regexDetector } from './match';

export interface CustomRule {
  id: string;
  /** The placeholder's name; default the id in capitals. */
  label?: string;
  regex?: string;
  flags?: string;
  words?: string[];
}

const escape = (w: string) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A custom rule as a detector; throws (at setup) on a regex that does not compile. */
export function customDetector(rule: CustomRule): Detector {
  const label = rule.label ?? rule.id.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
  if (rule.words) {
    const alternatives = [...rule.words]
      .sort((a, b) => b.length - a.length)
      .map(escape)
      .join('|');
    const re = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${alternatives})(?![\\p{L}\\p{N}_])`, 'giu');
    return regexDetector(rule.id, label, re);
  }
  const flags = `${(rule.flags ?? '').replace(/[gyd]/g, '')}g`;
  return regexDetector(rule.id, label, new RegExp(rule.regex ?? '(?!)', flags));
}
