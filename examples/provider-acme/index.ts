/**
 * A provider adapter plugin for the Acme Text API, a made-up wire format:
 *   POST {api_base}/v1/generate   x-acme-key: <key>
 *   { "engine": "...", "turns": [{ "speaker": "rules" | "human" | "machine", "text": "..." }],
 *     "budget": 100, "heat": 0.5, "stream": false }
 * answers { "result": { "text": "...", "stop": "done" | "budget" }, "meter": { "read": 12, "written": 5 } }
 * or, streamed, NDJSON lines { "piece": "..." } ... { "stop": "done", "meter": { ... } };
 * errors are { "problem": { "kind": "...", "detail": "..." } }.
 * Written only against the public API: `model-gateway/plugin`.
 */
import {
  adapterKit,
  definePlugin,
  upstreamStatusError,
  type ChatRequest,
  type HttpProviderAdapter,
} from 'model-gateway/plugin';

const SPEAKER: Record<string, string> = {
  system: 'rules',
  developer: 'rules',
  user: 'human',
  assistant: 'machine',
  tool: 'human',
};
const STOP: Record<string, 'stop' | 'length'> = { done: 'stop', budget: 'length' };

type Meter = { read?: number; written?: number };
const usageOf = (m: Meter | undefined) => adapterKit.usage(Number(m?.read ?? 0), Number(m?.written ?? 0));

function body(req: ChatRequest, engine: string, stream: boolean): Record<string, unknown> {
  return {
    engine,
    turns: req.messages.map((m) => ({
      speaker: SPEAKER[m.role] ?? 'human',
      text: adapterKit.textOf(m.content ?? null),
    })),
    ...(req.max_tokens !== undefined ? { budget: req.max_tokens } : {}),
    ...(req.temperature !== undefined ? { heat: req.temperature } : {}),
    stream,
  };
}

export const acmeAdapter: HttpProviderAdapter = {
  kind: 'http',
  type: 'acme',
  supportedParams: ['max_tokens', 'temperature', 'stream', 'stream_options'],
  streamFormat: 'ndjson',
  buildRequest(req, target, stream) {
    const base = (target.provider.api_base ?? 'https://api.acme.example').replace(/\/+$/, '');
    return {
      url: `${base}/v1/generate`,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-acme-key': target.provider.api_key ?? '',
        ...target.extraHeaders,
      },
      body: JSON.stringify(body(req, target.deployment.model, stream)),
    };
  },
  parseResponse(raw, ctx) {
    const b = raw as { result?: { text?: string; stop?: string }; meter?: Meter };
    if (typeof b.result?.text !== 'string') throw new Error('no result.text in the answer');
    return adapterKit.completion(ctx, b.result.text, [], STOP[b.result.stop ?? 'done'] ?? 'stop', usageOf(b.meter));
  },
  createStreamTranslator(ctx) {
    let done = false;
    let started = false;
    return {
      get done() {
        return done;
      },
      push(ev) {
        const line = JSON.parse(ev.data) as { piece?: string; stop?: string; meter?: Meter };
        const out = [];
        if (!started) {
          started = true;
          out.push(adapterKit.chunk(ctx, { role: 'assistant', content: '' }));
        }
        if (typeof line.piece === 'string') out.push(adapterKit.chunk(ctx, { content: line.piece }));
        if (line.stop) {
          done = true;
          out.push(
            adapterKit.chunk(ctx, {}, STOP[line.stop] ?? 'stop'),
            adapterKit.usageChunk(ctx, usageOf(line.meter)),
          );
        }
        return out;
      },
      finish: () => [],
    };
  },
  mapError(status, raw, _headers, provider) {
    const p = (raw as { problem?: { kind?: string; detail?: string } } | undefined)?.problem;
    return upstreamStatusError(provider, status, p?.detail ?? '', p?.kind ? `acme_${p.kind}` : undefined);
  },
};

export default definePlugin({
  name: 'provider-acme',
  description: 'Adds the `acme` provider type.',
  providerTypes: ['acme'],
  configSchema: { type: 'object', additionalProperties: false },
  setup(_config, services) {
    services.providers.register(acmeAdapter);
    return {};
  },
});
