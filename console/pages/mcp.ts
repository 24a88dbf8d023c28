/**
 * MCP (the mcp plugin's `mcp` section): its servers with their health and tools, and the call log filtered by
 * server, tool, outcome and key, a page at a time.
 */
import { api, type Me } from '../api';
import { append, clear, h, ms, table, when } from '../dom';
import { section } from './sections';

interface Server {
  name: string;
  transport: string;
  status: string;
  error: string | null;
  since: number | null;
  restarts: number;
  tools: number;
  tool_names: string[];
}
interface Call {
  id: string;
  created_at: number | string;
  key_hash: string | null;
  account_id: string | null;
  server: string;
  tool: string;
  duration_ms: number;
  outcome: string;
  error_code: string | null;
  cost: number | string;
  request_id: string | null;
}

const OUTCOMES = ['ok', 'error', 'failed', 'refused', 'cancelled', 'timeout'];

/** Each server as a line: name, transport, status (its last error beside it) and, below, its tools. */
function serversCard(servers: Server[]): HTMLElement {
  const item = (s: Server) =>
    h(
      'li',
      { class: 'item', 'data-server': s.name },
      h(
        'div',
        { class: 'inline' },
        h('strong', {}, s.name),
        h('span', { class: 'muted' }, s.transport),
        h('span', { class: `badge ${s.status === 'up' ? 'on' : 'off'}` }, s.status),
        s.error ? h('span', { class: 'error-text' }, s.error) : null,
      ),
      h(
        'p',
        { class: 'tool-list' },
        `${s.tools} tools: `,
        s.tool_names.map((t) => t.slice(s.name.length + 2)).join(', ') || '—',
      ),
    );
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Servers'),
    servers.length
      ? h('ul', { id: 'mcp-servers', class: 'items' }, ...servers.map(item))
      : h('p', { class: 'empty' }, 'No MCP servers in gateway.yaml.'),
  );
}

function callRow(c: Call, keyName: (hash: string) => string): Node[] {
  return [
    document.createTextNode(when(new Date(Number(c.created_at)).toISOString()).slice(0, 19)),
    document.createTextNode(c.key_hash ? keyName(c.key_hash) : '—'),
    document.createTextNode(`${c.server} / ${c.tool}`),
    h('span', { class: `badge ${c.outcome === 'ok' ? 'on' : 'off'}`, title: c.error_code ?? '' }, c.outcome),
    document.createTextNode(c.error_code ?? ''),
    document.createTextNode(ms(c.duration_ms)),
  ];
}

export async function mcpPage(main: HTMLElement, _me: Me): Promise<void> {
  const servers = (await section.view<Server>('mcp', 'servers', {})).data;
  const keys = (await api<{ data: Array<{ hash: string; name: string; label: string }> }>('GET', 'keys?limit=200'))
    .data;
  const names = new Map(keys.map((k) => [k.hash, `${k.name} (${k.label.slice(-4)})`]));
  const keyName = (hash: string) => names.get(hash) ?? hash.slice(0, 8);
  const sel = (id: string, empty: string, opts: Array<[string, string]>) =>
    h(
      'select',
      { id, 'aria-label': empty },
      h('option', { value: '' }, empty),
      ...opts.map(([v, t]) => h('option', { value: v }, t)),
    );
  const f = {
    server: sel(
      'calls-server',
      'any server',
      servers.map((s) => [s.name, s.name]),
    ),
    tool: h('input', { id: 'calls-tool', placeholder: 'tool', 'aria-label': 'tool', class: 'small' }),
    outcome: sel(
      'calls-outcome',
      'any outcome',
      OUTCOMES.map((o) => [o, o]),
    ),
    key: sel(
      'calls-key',
      'any key',
      keys.map((k) => [k.hash, keyName(k.hash)]),
    ),
  };
  const calls = h('section', { class: 'card' });
  const load = async (cursor?: string) => {
    const q = { server: f.server.value, tool: f.tool.value.trim(), outcome: f.outcome.value, key: f.key.value, cursor };
    const p = await section.view<Call>('mcp', 'calls', q);
    const rows = p.data.map((c) => callRow(c, keyName));
    const more = p.next
      ? h(
          'button',
          {
            id: 'calls-more',
            onclick: (e: Event) => ((e.target as HTMLElement).remove(), void load(p.next ?? undefined)),
          },
          'Older',
        )
      : null;
    if (cursor) {
      const body = calls.querySelector('tbody') as HTMLElement;
      for (const r of rows) body.appendChild(h('tr', {}, ...r.map((c) => h('td', {}, c))));
      append(calls, [more]);
      return;
    }
    clear(
      calls,
      h('h2', {}, 'Tool calls'),
      rows.length
        ? table(['Time (UTC)', 'Key', 'Tool', 'Outcome', 'Error', 'Duration'], rows, { id: 'mcp-calls' })
        : h('p', { class: 'empty', id: 'mcp-calls-empty' }, 'No tool calls match.'),
      more,
    );
  };
  main.append(
    h('header', { class: 'page-head' }, h('h1', {}, 'MCP')),
    serversCard(servers),
    h(
      'form',
      { class: 'card inline filters', onsubmit: (e: Event) => (e.preventDefault(), void load()) },
      f.server,
      f.tool,
      f.outcome,
      f.key,
      h('button', { id: 'calls-apply', type: 'submit', class: 'primary' }, 'Apply'),
    ),
    calls,
  );
  await load();
}
