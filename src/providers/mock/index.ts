import type { LocalProvider } from '../types';
import { MOCK_PARAMS } from './params';
import { mockCompletion } from './response';
import { mockStream } from './stream';

/** The built-in offline model: deterministic answers from the prompt, real token counts, configurable chunking. */
export const mockProvider: LocalProvider = {
  kind: 'local',
  type: 'mock',
  supportedParams: MOCK_PARAMS,
  complete: async (req, _target, ctx) => mockCompletion(req, ctx),
  stream: mockStream,
};
