import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { join } from 'node:path';

/** The stdio fixture as the gateway starts it: node with tsx's loader. */
export const STDIO_SERVER = {
  command: process.execPath,
  args: ['--require', require.resolve('tsx/cjs'), join(__dirname, '..', '..', 'fixtures', 'mcp-stdio-server.ts')],
};

/** The official SDK's client on the gateway's /mcp with a gateway key. */
export async function mcpClient(gatewayUrl: string, key: string): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

export const textOf = (r: Record<string, unknown>): string =>
  ((r.content as Array<{ type: string; text?: string }> | undefined) ?? []).map((c) => c.text ?? '').join('');
