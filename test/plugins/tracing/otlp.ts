import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as OTLP/HTTP's JSON encoding carries it. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status?: { code?: number };
}

export interface OtlpReceiver {
  url: string;
  spans: OtlpSpan[];
  /** The resource attributes of every export, e.g. service.name. */
  resources: Array<Array<{ key: string; value: Record<string, unknown> }>>;
  server: Server;
}

/** An in-process OTLP/HTTP receiver (JSON encoding) on loopback. */
export async function otlpReceiver(): Promise<OtlpReceiver> {
  const spans: OtlpSpan[] = [];
  const resources: OtlpReceiver['resources'] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString()) as {
        resourceSpans: Array<{
          resource?: { attributes?: OtlpReceiver['resources'][number] };
          scopeSpans: Array<{ spans: OtlpSpan[] }>;
        }>;
      };
      for (const rs of body.resourceSpans) {
        resources.push(rs.resource?.attributes ?? []);
        for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, spans, resources, server };
}

/** An attribute's value as JS (string, number, boolean, string[]), or undefined. */
export function attr(span: Pick<OtlpSpan, 'attributes'>, key: string): unknown {
  const v = span.attributes.find((a) => a.key === key)?.value;
  if (!v) return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('boolValue' in v) return v.boolValue;
  if ('arrayValue' in v)
    return ((v.arrayValue as { values: Array<{ stringValue: string }> }).values ?? []).map((x) => x.stringValue);
  return v;
}
