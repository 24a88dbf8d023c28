import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { builtinDetectors } from '../../../plugins/guardrails/detectors/builtin';

/**
 * The labelled corpus (corpus.jsonl: PII and secrets in many formats, and look-alikes that are not), scored per
 * detector at the value level: a found value equal to a labelled one is a true positive, any other found value a false
 * positive, a labelled value not found a false negative (prompt injection, labelled `*`, is scored per snippet). The
 * floors are today's figures (docs/reference/guardrails.md): a change that lowers either fails here.
 */
interface Row {
  text: string;
  expect: Record<string, string[]>;
}

const FLOORS: Record<string, { precision: number; recall: number }> = {
  email: { precision: 1, recall: 0.981 },
  phone: { precision: 1, recall: 0.975 },
  payment_card: { precision: 1, recall: 0.981 },
  iban: { precision: 1, recall: 1 },
  ip_address: { precision: 0.976, recall: 1 },
  secrets: { precision: 1, recall: 0.984 },
  prompt_injection: { precision: 1, recall: 1 },
  us_ssn: { precision: 1, recall: 0.937 },
  uk_nino: { precision: 1, recall: 1 },
  es_dni: { precision: 1, recall: 1 },
};

const rows = readFileSync(join(__dirname, 'corpus.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Row);

function score(id: string) {
  const detector = builtinDetectors(['us_ssn', 'uk_nino', 'es_dni'], []).find((d) => d.id === id);
  if (!detector) throw new Error(id);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  const misses: string[] = [];
  const miss = (line: string) => {
    misses.push(line);
    return 1;
  };
  for (const row of rows) {
    const found = detector.find(row.text).map((m) => row.text.slice(m.start, m.end));
    const want = row.expect[id] ?? [];
    if (want[0] === '*') {
      if (found.length > 0) tp++;
      else fn += miss(`missed: ${row.text}`);
      continue;
    }
    for (const w of want)
      if (found.includes(w)) tp++;
      else fn += miss(`missed ${JSON.stringify(w)} in ${JSON.stringify(row.text)}`);
    for (const f of found)
      if (!want.includes(f)) fp += miss(`false ${JSON.stringify(f)} in ${JSON.stringify(row.text)}`);
  }
  const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 1 : tp / (tp + fn);
  return { tp, fp, fn, precision, recall, misses };
}

describe('guardrails: the labelled corpus', function () {
  it('has at least 300 snippets, positives and look-alikes of every detector', () => {
    expect(rows.length).to.be.at.least(300);
    for (const id of Object.keys(FLOORS))
      expect(
        rows.some((r) => r.expect[id]),
        id,
      ).to.equal(true);
    expect(rows.filter((r) => Object.keys(r.expect).length === 0).length).to.be.at.least(100);
  });

  it('precision and recall per detector hold their floors', () => {
    const lines: string[] = ['detector          n    TP   FP   FN   precision  recall'];
    const failures: string[] = [];
    for (const [id, floor] of Object.entries(FLOORS)) {
      const s = score(id);
      const n = rows.filter((r) => r.expect[id]).length;
      lines.push(
        `${id.padEnd(16)} ${String(n).padStart(3)} ${String(s.tp).padStart(5)} ${String(s.fp).padStart(4)} ` +
          `${String(s.fn).padStart(4)}   ${s.precision.toFixed(3).padStart(9)}  ${s.recall.toFixed(3).padStart(6)}`,
      );
      if (s.precision < floor.precision || s.recall < floor.recall)
        failures.push(
          `${id}: precision ${s.precision.toFixed(3)}, recall ${s.recall.toFixed(3)}\n  ${s.misses.join('\n  ')}`,
        );
    }
    console.log(`      ${lines.join('\n      ')}`);
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });
});
