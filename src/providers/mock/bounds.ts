import { errors } from '../../errors';

/**
 * What one request may make the mock produce. The mock runs in the gateway's own process, on its event loop: every
 * vector it hashes and every byte it answers delays every other request (and /health), for about nothing in credit.
 * Beyond these a request is a 400 naming the field (`out_of_range`), before any work:
 *
 * - embeddings: at most 2,048 inputs (OpenAI's own limit), at most 8,192 dimensions per vector, and at most 524,288
 *   numbers in one answer (inputs x dimensions: 2,048 x 256, 128 x 4,096, 64 x 8,192; ~11 MB of JSON, a quarter of a
 *   second of this machine's CPU);
 * - chat: at most 128 choices (`n`, OpenAI's limit); choices and log probabilities together at most 8 MiB of answer
 *   (one choice of plain text is never refused: the request body's own limit bounds it); a value sampled from a JSON
 *   schema (`response_format`, a tool's parameters) at most 1 MiB.
 */
export const MOCK_LIMITS = {
  inputs: 2048,
  dimensions: 8192,
  numbers: 524_288,
  choices: 128,
  answerBytes: 8 * 1024 * 1024,
  sampleBytes: 1024 * 1024,
} as const;

/** A 400 naming `param`: the request asks the mock for more than MOCK_LIMITS allows. */
export function tooMuch(message: string, param: string): Error {
  return errors.invalidRequest(`${message} (the mock's limits: src/providers/mock/bounds.ts)`, param, 'out_of_range');
}

/** Refuse an embeddings request beyond MOCK_LIMITS; `asked` is whether the request named its dimensions. */
export function checkEmbeddings(inputs: number, dims: number, asked: boolean): void {
  const L = MOCK_LIMITS;
  if (inputs > L.inputs) throw tooMuch(`input holds ${inputs} items: at most ${L.inputs}`, 'input');
  if (dims > L.dimensions)
    throw tooMuch(
      `dimensions is ${dims}${asked ? '' : " (the model's configured dimensions)"}: at most ${L.dimensions}`,
      'dimensions',
    );
  if (inputs * dims > L.numbers)
    throw tooMuch(
      `${inputs} inputs x ${dims} dimensions is ${inputs * dims} numbers: at most ${L.numbers} in one request ` +
        `(fewer inputs${asked ? ' or fewer dimensions' : ''})`,
      asked ? 'dimensions' : 'input',
    );
}

/** The bytes a value sampled from a schema may still take; throws naming `param` once spent. */
export class SampleBudget {
  private left: number = MOCK_LIMITS.sampleBytes;
  constructor(readonly param: string) {}
  take(bytes: number): void {
    this.left -= bytes;
    if (this.left < 0 || !Number.isFinite(bytes))
      throw tooMuch(`the value the schema asks for is more than ${MOCK_LIMITS.sampleBytes} bytes`, this.param);
  }
}

/**
 * Refuse a chat answer beyond MOCK_LIMITS: `n` choices of `bytes` each (the text, or the tool calls' arguments), with
 * log probabilities of its `tokens` tokens when asked (`logprobs` false for tool calls, which have none).
 */
export function checkAnswer(
  req: { n?: unknown; logprobs?: unknown; top_logprobs?: unknown },
  bytes: number,
  tokens: number,
  logprobs = true,
): void {
  const L = MOCK_LIMITS;
  const n = Number.isInteger(req.n) && (req.n as number) > 0 ? (req.n as number) : 1;
  if (n > L.choices) throw tooMuch(`n is ${n}: at most ${L.choices} choices`, 'n');
  if (n > 1 && n * bytes > L.answerBytes)
    throw tooMuch(`n is ${n}: ${n} choices of ${bytes} bytes are more than ${L.answerBytes} bytes`, 'n');
  if (!logprobs || req.logprobs !== true) return;
  const top = typeof req.top_logprobs === 'number' && req.top_logprobs > 0 ? req.top_logprobs : 0;
  // A token's log probability is ~60 bytes of JSON and its bytes as numbers (~4 a byte); each alternative again.
  const perChoice = bytes + (1 + top) * (tokens * 60 + bytes * 4);
  if (n * perChoice > L.answerBytes)
    throw tooMuch(
      `log probabilities of ${n} x ${tokens} tokens${top > 0 ? ` with ${top} alternatives each` : ''} are more ` +
        `than ${L.answerBytes} bytes`,
      top > 0 ? 'top_logprobs' : 'logprobs',
    );
}
