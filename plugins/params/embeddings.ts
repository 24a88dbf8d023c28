import { combine, type EmbeddingsRequest, type GatewayError } from '../../src/plugin';
import { fromAjv } from './validate';
import { requests } from './generated/requests';

const validate = requests.embeddings;

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
