import Ajv from 'ajv';
import type { GatewayError } from '../../src/errors';
import { fromAjv } from './validate';
import { combine } from '../../src/api/chat-request';
import type { EmbeddingsRequest } from '../../src/types/embeddings';

/** OpenAI's limits: at most 2048 inputs, none empty; token ids are non-negative integers. */
export const embeddingsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['model', 'input'],
  properties: {
    model: { type: 'string', minLength: 1 },
    input: {
      type: 'array',
      minItems: 1,
      maxItems: 2048,
      anyOf: [
        { items: { type: 'string', minLength: 1 } },
        { items: { type: 'array', minItems: 1, items: { type: 'integer', minimum: 0 } } },
      ],
    },
    encoding_format: { enum: ['float', 'base64'] },
    dimensions: { type: 'integer', minimum: 1, maximum: 65536 },
    user: { type: 'string', maxLength: 256 },
  },
} as const;

const validate = new Ajv({ allErrors: true, strict: false }).compile(embeddingsSchema);

/** Every problem of an embeddings request (400 listing them all; nothing goes upstream). */
export function validateEmbeddings(req: EmbeddingsRequest): GatewayError[] {
  return validate(req) ? [] : fromAjv(validate.errors ?? [], req);
}

/** Embeddings have their own schema and no chat parameters to drop. */
export async function checkEmbeddings(req: EmbeddingsRequest, next: () => Promise<void>): Promise<void> {
  const problems = validateEmbeddings(req);
  if (problems.length > 0) throw combine(problems);
  await next();
}
