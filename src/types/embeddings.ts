/** OpenAI embeddings wire types, as the gateway speaks them to clients. */

/** The request body, after validation: `input` is always a list (strings or token arrays). */
export interface EmbeddingsRequest {
  model: string;
  /** Strings, or token arrays (integer ids), never mixed. */
  input: string[] | number[][];
  encoding_format: 'float' | 'base64';
  dimensions?: number;
  user?: string;
}

export interface EmbeddingObject {
  object: 'embedding';
  index: number;
  /** Floats, or little-endian float32 bytes in base64 when `encoding_format` is base64. */
  embedding: number[] | string;
}

export interface EmbeddingsUsage {
  prompt_tokens: number;
  total_tokens: number;
  /** Credits charged (added by the credit plugin). */
  cost?: number;
}

export interface EmbeddingsResponse {
  object: 'list';
  data: EmbeddingObject[];
  model: string;
  usage: EmbeddingsUsage;
}

/** What a provider's embeddings mapping returns: one vector per input, in order, and its token count if it said. */
export interface EmbeddingsResult {
  vectors: number[][];
  promptTokens?: number;
}
