/** OpenAI Responses API wire types, as far as the gateway serves them. */

export type InputContent =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url?: string; file_id?: string; detail?: 'auto' | 'low' | 'high' }
  | { type: 'output_text'; text: string; annotations?: unknown[] }
  | { type: 'refusal'; refusal: string };

export interface MessageItem {
  type?: 'message';
  id?: string;
  role: 'user' | 'system' | 'developer' | 'assistant';
  content: string | InputContent[];
  status?: string;
}

export interface FunctionCallItem {
  type: 'function_call';
  id?: string;
  call_id: string;
  name: string;
  /** The namespace tool the function was declared in, when it was. */
  namespace?: string;
  arguments: string;
  status?: string;
}

/** A call of a `custom` tool: its input is free text (e.g. a patch), not JSON arguments. */
export interface CustomToolCallItem {
  type: 'custom_tool_call';
  id?: string;
  call_id: string;
  name: string;
  namespace?: string;
  input: string;
  status?: string;
}

export interface CustomToolCallOutputItem {
  type: 'custom_tool_call_output';
  id?: string;
  call_id: string;
  output: string | InputContent[];
}

export interface FunctionCallOutputItem {
  type: 'function_call_output';
  id?: string;
  call_id: string;
  output: string | InputContent[];
  status?: string;
}

export interface ReasoningItem {
  type: 'reasoning';
  id: string;
  summary: Array<{ type: 'summary_text'; text: string }>;
  content?: Array<{ type: 'reasoning_text'; text: string }>;
  /**
   * What the provider needs back to continue after this reasoning (thinking signatures, thought signatures,
   * encrypted reasoning), opaque to the client: the gateway's own encoding of the chat reasoning_details.
   */
  encrypted_content?: string | null;
  status?: string;
}

export type InputItem =
  | MessageItem
  | FunctionCallItem
  | FunctionCallOutputItem
  | CustomToolCallItem
  | CustomToolCallOutputItem
  | ReasoningItem;

export interface FunctionToolDef {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
}

/** A tool whose input is free text, optionally constrained by a grammar (Codex's `apply_patch`). */
export interface CustomToolDef {
  type: 'custom';
  name: string;
  description?: string | null;
  format?: { type: 'text' } | { type: 'grammar'; syntax: 'lark' | 'regex'; definition: string };
}

/** Function and custom tools grouped under a name; calls come back with `namespace` set. */
export interface NamespaceToolDef {
  type: 'namespace';
  name: string;
  description?: string | null;
  tools: Array<FunctionToolDef | CustomToolDef>;
}

/** Any tool a client may declare: function, custom, namespace, or a hosted tool the gateway drops. */
export type ToolDef = FunctionToolDef | CustomToolDef | NamespaceToolDef | { type: string; [k: string]: unknown };

export type TextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      name: string;
      schema: Record<string, unknown>;
      description?: string;
      strict?: boolean | null;
    };

export type ResponsesToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function' | 'custom'; name: string; namespace?: string }
  | { type: string; [k: string]: unknown };

/** The request body of POST /v1/responses. */
export interface ResponsesRequest {
  model: string;
  input: string | InputItem[];
  instructions?: string | null;
  tools?: ToolDef[];
  tool_choice?: ResponsesToolChoice;
  parallel_tool_calls?: boolean;
  temperature?: number;
  top_p?: number;
  max_output_tokens?: number;
  text?: { format?: TextFormat; verbosity?: 'low' | 'medium' | 'high' };
  reasoning?: { effort?: string | null; summary?: string | null };
  metadata?: Record<string, string>;
  user?: string;
  store?: boolean;
  previous_response_id?: string | null;
  stream?: boolean;
}

export type OutputContent =
  | { type: 'output_text'; text: string; annotations: unknown[]; logprobs: unknown[] }
  | { type: 'refusal'; refusal: string };

export interface OutputMessage {
  type: 'message';
  id: string;
  status: 'in_progress' | 'completed' | 'incomplete';
  role: 'assistant';
  content: OutputContent[];
}

/** The tools a remote MCP server offered (OpenAI's `mcp_list_tools` item). */
export interface McpListToolsItem {
  type: 'mcp_list_tools';
  id: string;
  server_label: string;
  tools: Array<{ name: string; description?: string; input_schema: Record<string, unknown>; annotations?: unknown }>;
  error?: string | null;
}

/** A call the gateway made to a remote MCP server for the model (OpenAI's `mcp_call` item). */
export interface McpCallItem {
  type: 'mcp_call';
  id: string;
  server_label: string;
  name: string;
  arguments: string;
  output: string | null;
  error: string | null;
  approval_request_id: null;
}

export type OutputItem =
  | OutputMessage
  | (FunctionCallItem & { id: string; status: string })
  | (CustomToolCallItem & { id: string; status: string })
  | ReasoningItem
  | McpListToolsItem
  | McpCallItem;

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
  /** Credits charged for the request. */
  cost?: number;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** The `response` object: what POST answers and GET /responses/{id} returns. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: string } | null;
  model: string;
  output: OutputItem[];
  usage: ResponseUsage | null;
  [k: string]: unknown;
}
