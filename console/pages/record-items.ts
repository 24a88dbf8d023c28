/**
 * The conversation of a record as a person reads it: the request's messages (chat messages or /v1/responses input
 * items) and the answer's output items (text, refusals, tool calls, reasoning summaries, MCP calls). Stored bodies are
 * data from clients and models, so every value is read defensively and put in as text.
 */
import { h } from '../dom';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A size for people: `980 B`, `12.3 kB`, `1.4 MB`. */
export function bytes(n: number): string {
  if (n < 1000) return `${n} B`;
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)} kB`;
  return `${(n / 1_000_000).toFixed(1)} MB`;
}

/**
 * An image stands in as a line: its type and size for inline data, its address (cut) for a link; never the pixels.
 * `omitted` is the size the store gave a large inline image it kept as `data:<type>;base64,` alone.
 */
export function imagePlaceholder(url: string, fileId?: string, omitted?: unknown): string {
  if (fileId) return `[image: file ${fileId}]`;
  const data = /^data:([^;,]+)?(;base64)?,/.exec(url);
  if (data) {
    const payload = url.length - data[0].length;
    const size = typeof omitted === 'number' ? omitted : data[2] ? Math.floor((payload * 3) / 4) : payload;
    return `[image: ${data[1] ?? 'unknown type'}, ${bytes(size)}]`;
  }
  return `[image: ${url.length > 80 ? `${url.slice(0, 79)}…` : url}]`;
}

/** Tool arguments pretty-printed when they are JSON, else as they came. */
export function prettyArgs(args: unknown): string {
  if (typeof args !== 'string') return JSON.stringify(args ?? null, null, 2);
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}

/** The text parts of a content (a string, or chat / responses parts) as paragraphs and image placeholders. */
function contentNodes(content: unknown): Node[] {
  if (typeof content === 'string') return [h('p', { class: 'text' }, content)];
  if (!Array.isArray(content)) return [];
  const out: Node[] = [];
  for (const part of content) {
    if (!isObj(part)) continue;
    const t = str(part.type);
    if (t === 'text' || t === 'input_text' || t === 'output_text') out.push(h('p', { class: 'text' }, str(part.text)));
    else if (t === 'refusal') out.push(h('p', { class: 'text refusal' }, `Refused: ${str(part.refusal)}`));
    else if (t === 'image_url') {
      const img: Obj = isObj(part.image_url) ? part.image_url : {};
      out.push(h('p', { class: 'placeholder' }, imagePlaceholder(str(img.url), undefined, img.omitted_bytes)));
    } else if (t === 'input_image')
      out.push(h('p', { class: 'placeholder' }, imagePlaceholder(str(part.image_url), str(part.file_id) || undefined)));
    else out.push(h('p', { class: 'placeholder' }, `[${t || 'part'}]`));
  }
  return out;
}

function toolCall(name: string, args: unknown, id?: string): HTMLElement {
  return h(
    'div',
    { class: 'tool-call' },
    h('div', {}, 'Calls tool ', h('strong', { class: 'tool-name' }, name || '(unnamed)'), id ? ` · ${id}` : ''),
    h('pre', { class: 'tool-args' }, prettyArgs(args)),
  );
}

/** A turn of the conversation: who speaks (with the tool call it answers, ids kept in their case) and what. */
function turn(role: string, ...body: Array<Node | null>): HTMLElement {
  const [who, ref] = role.split(' · ');
  return h(
    'div',
    { class: `turn role-${who.replace(/[^a-z_]/g, '')}` },
    h('div', { class: 'role' }, who, ref ? h('span', { class: 'ref' }, ` · ${ref}`) : null),
    ...body,
  );
}

/** One chat message or one /v1/responses input or output item, as a turn. */
export function itemNode(item: unknown): HTMLElement | null {
  if (!isObj(item)) return null;
  const type = str(item.type) || (item.role ? 'message' : '');
  if (type === 'message') {
    const calls = Array.isArray(item.tool_calls) ? item.tool_calls.filter(isObj) : [];
    const role = str(item.role) || 'message';
    return turn(
      role === 'tool' ? `tool result${item.tool_call_id ? ` · ${str(item.tool_call_id)}` : ''}` : role,
      ...contentNodes(item.content),
      ...calls.map((c) => {
        const fn = isObj(c.function) ? c.function : {};
        return toolCall(str(fn.name), fn.arguments, str(c.id));
      }),
    );
  }
  if (type === 'function_call' || type === 'custom_tool_call')
    return turn('assistant', toolCall(str(item.name), item.arguments ?? item.input, str(item.call_id)));
  if (type === 'function_call_output' || type === 'custom_tool_call_output')
    return turn(`tool result · ${str(item.call_id)}`, h('pre', { class: 'tool-args' }, prettyArgs(item.output)));
  if (type === 'reasoning') {
    const summary = Array.isArray(item.summary) ? item.summary.filter(isObj).map((p) => str(p.text)) : [];
    return turn('reasoning', h('p', { class: 'text muted' }, summary.join('\n\n') || 'Reasoning (no summary kept).'));
  }
  if (type === 'mcp_call')
    return turn(
      `MCP · ${str(item.server_label)}`,
      toolCall(str(item.name), item.arguments),
      item.error
        ? h('p', { class: 'text refusal' }, `Failed: ${str(item.error)}`)
        : h('pre', { class: 'tool-args' }, prettyArgs(item.output)),
    );
  if (type === 'mcp_list_tools') {
    const tools = Array.isArray(item.tools) ? item.tools.filter(isObj).map((t) => str(t.name)) : [];
    return turn(
      `MCP · ${str(item.server_label)}`,
      h('p', { class: 'text muted' }, `Listed tools: ${tools.join(', ')}`),
    );
  }
  return turn(type || 'item', h('pre', { class: 'tool-args' }, JSON.stringify(item, null, 2)));
}

/** A list of items as turns. */
export function conversation(items: unknown[], id: string): HTMLElement {
  return h('div', { class: 'conversation', id }, ...items.map(itemNode));
}
