/**
 * @module
 * E-mail addresses: a local part, `@`, and a domain with a top-level label of letters. Not preceded by a character
 * that could belong to the local part (so the whole address is taken), and not an `@mention` or `user@host` without
 * a dot in the domain.
 */
import { regexDetector } from './match';

const EMAIL =
  /(?<![\w.%+-])[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![\w-])/g;

export const email = regexDetector('email', 'EMAIL', EMAIL, (v) => !v.includes('..'), ['@']);
