import type { HttpProviderAdapter } from '../types';
import { BEDROCK_PARAMS } from './params';
import { buildBedrockRequest } from './request';
import { parseBedrockResponse } from './response';
import { createBedrockTranslator } from './stream';
import { mapBedrockError } from './errors';

export { converseBody, credentials } from './request';

/** AWS Bedrock Converse / ConverseStream, SigV4-signed. */
export const bedrockAdapter: HttpProviderAdapter = {
  kind: 'http',
  type: 'bedrock',
  supportedParams: BEDROCK_PARAMS,
  streamFormat: 'aws-eventstream',
  buildRequest: buildBedrockRequest,
  parseResponse: parseBedrockResponse,
  createStreamTranslator: createBedrockTranslator,
  mapError: mapBedrockError,
};
