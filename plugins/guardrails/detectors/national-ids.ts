/**
 * @module
 * National identity numbers, each enabled by the operator (`detectors.national_ids`): formats are local and their
 * look-alikes common, so none runs unless named. Each is checked as its issuer defines it where a rule exists.
 */
import type { Detector } from '../../../src/plugin';
import { digitsOf, luhnValid, regexDetector } from './match';

/** US Social Security numbers, written with separators: area not 000, 666 or 9xx; group not 00; serial not 0000. */
const usSsn = regexDetector('us_ssn', 'SSN', /(?<![\d-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\d-])/g, (_v, m) => {
  const area = Number(m[1]);
  return area !== 0 && area !== 666 && area < 900 && m[3] !== '00' && m[4] !== '0000';
});

/** UK National Insurance numbers: two prefix letters (not D, F, I, Q, U, V; second not O; not BG GB KN NK NT TN ZZ). */
const ukNino = regexDetector(
  'uk_nino',
  'NINO',
  /(?<![A-Za-z0-9])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])/g,
);

/** Canadian Social Insurance numbers: nine digits in threes, Luhn-valid, not starting with 0 or 8. */
const caSin = regexDetector('ca_sin', 'SIN', /(?<![\d-])[1-79]\d{2}([- ])\d{3}\1\d{3}(?![\d-])/g, (v) =>
  luhnValid(digitsOf(v)),
);

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';
/** Spanish DNI (eight digits and a check letter) and NIE (X, Y or Z, seven digits, a letter): the letter is mod 23. */
const esDni = regexDetector('es_dni', 'DNI', /(?<![A-Za-z0-9])([XYZ]?)(\d{7,8})-?([A-Z])(?![A-Za-z0-9])/g, (_v, m) => {
  const prefix = m[1];
  if (prefix === '' ? m[2].length !== 8 : m[2].length !== 7) return false;
  const n = Number(`${prefix === '' ? '' : 'XYZ'.indexOf(prefix)}${m[2]}`);
  return DNI_LETTERS[n % 23] === m[3];
});

/** Dutch BSN: nine digits passing the 11-test; only near the word (a bare 9-digit number is too common). */
const nlBsn = regexDetector(
  'nl_bsn',
  'BSN',
  /(?<=\b(?:BSN|bsn|burgerservicenummer)\D{0,20})(?<!\d)\d{9}(?!\d)/g,
  (v) => {
    let sum = 0;
    for (let i = 0; i < 8; i++) sum += (9 - i) * Number(v[i]);
    sum -= Number(v[8]);
    return sum % 11 === 0 && sum !== 0;
  },
  ['bsn', 'burgerservicenummer'],
);

/** The national id detectors an operator may enable, by id. */
export const NATIONAL_IDS: Readonly<Record<string, Detector>> = {
  us_ssn: usSsn,
  uk_nino: ukNino,
  ca_sin: caSin,
  es_dni: esDni,
  nl_bsn: nlBsn,
};
