/**
 * JSON Schema of the chat request body (spec 2.7, 4.1, 8), its validator generated at build time
 * (scripts/gen-validators.js). Unknown fields are allowed ("any other field may also be sent"); fields the
 * spec defines must have its types and ranges. Where the spec gives two bounds the wider
 * is accepted: max_tokens >= 0, top_logprobs 0..20.
 */
const num = (minimum: number, maximum: number) => ({ type: 'number', minimum, maximum });
const NAME = '^[a-zA-Z0-9_]{1,64}$';
/** A string that is not empty, checked in constant time (see image_url.url). */
export const NON_EMPTY = '^[\\s\\S]';
const stringMap = { type: 'object', additionalProperties: { type: 'string' } };

const contentPart = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', minLength: 1 },
    text: { type: 'string' },
    image_url: {
      type: 'object',
      required: ['url'],
      // Not minLength: ajv counts a string's length character by character, a walk over every byte of a base64
      // image (a quarter of a 4 MB request's CPU); an anchored pattern looks at its first character.
      properties: { url: { type: 'string', pattern: NON_EMPTY }, detail: { enum: ['auto', 'low', 'high'] } },
    },
  },
  allOf: [
    { if: { properties: { type: { const: 'text' } } }, then: { required: ['text'] } },
    { if: { properties: { type: { const: 'image_url' } } }, then: { required: ['image_url'] } },
  ],
};

const toolCall = {
  type: 'object',
  required: ['id', 'type', 'function'],
  properties: {
    id: { type: 'string', minLength: 1 },
    type: { const: 'function' },
    function: {
      type: 'object',
      required: ['name', 'arguments'],
      properties: { name: { type: 'string' }, arguments: { type: 'string' } },
    },
  },
};

export const messageSchema = {
  type: 'object',
  // content is required except on an assistant message that carries calls (validate.ts says so by name).
  required: ['role'],
  properties: {
    role: { enum: ['system', 'developer', 'user', 'assistant', 'function', 'tool'] },
    content: { anyOf: [{ type: 'string' }, { type: 'array', items: contentPart }, { type: 'null' }] },
    name: { type: 'string', pattern: NAME },
    function_call: {
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string' }, arguments: { type: 'string' } },
    },
    tool_calls: { type: 'array', items: toolCall },
    tool_call_id: { type: 'string', minLength: 1 },
  },
};

const functionDef = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' },
    description: { type: 'string' },
    parameters: { type: 'object' },
    strict: { type: ['boolean', 'null'] },
  },
};

export const chatRequestSchema = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1 },
    messages: { type: 'array', minItems: 1, items: messageSchema },
    temperature: num(0, 2),
    top_p: num(0, 1),
    top_k: { type: 'integer', minimum: 0 },
    min_p: num(0, 1),
    top_a: num(0, 1),
    seed: { type: 'integer' },
    frequency_penalty: num(-2, 2),
    presence_penalty: num(-2, 2),
    repetition_penalty: num(0, 2),
    max_tokens: { type: 'integer', minimum: 0 },
    max_completion_tokens: { type: 'integer', minimum: 0 },
    stop: { anyOf: [{ type: 'string' }, { type: 'array', maxItems: 4, items: { type: 'string' } }, { type: 'null' }] },
    n: { type: 'integer', minimum: 1, maximum: 128 },
    verbosity: { enum: ['low', 'medium', 'high'] },
    response_format: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { enum: ['text', 'json_object', 'json_schema'] },
        json_schema: {
          type: 'object',
          required: ['name'],
          properties: {
            name: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' },
            schema: { type: 'object' },
            strict: { type: ['boolean', 'null'] },
            description: { type: 'string' },
          },
        },
      },
      if: { properties: { type: { const: 'json_schema' } } },
      then: { required: ['json_schema'] },
    },
    structured_outputs: { type: 'boolean' },
    reasoning_effort: { enum: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] },
    reasoning: {
      type: 'object',
      properties: {
        effort: { enum: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] },
        max_tokens: { type: 'integer', minimum: 0 },
        exclude: { type: 'boolean' },
        enabled: { type: 'boolean' },
      },
    },
    tools: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'function'],
        properties: { type: { const: 'function' }, function: functionDef },
      },
    },
    tool_choice: {
      anyOf: [
        { enum: ['none', 'auto', 'required'] },
        {
          type: 'object',
          required: ['type', 'function'],
          properties: {
            type: { const: 'function' },
            function: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
          },
        },
      ],
    },
    parallel_tool_calls: { type: 'boolean' },
    functions: { type: 'array', items: functionDef },
    function_call: {
      anyOf: [
        { enum: ['none', 'auto'] },
        { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
      ],
    },
    logit_bias: { type: 'object', propertyNames: { pattern: '^[0-9]+$' }, additionalProperties: num(-100, 100) },
    logprobs: { type: 'boolean' },
    top_logprobs: { type: 'integer', minimum: 0, maximum: 20 },
    stream: { type: 'boolean' },
    stream_options: { type: 'object', properties: { include_usage: { type: 'boolean' } } },
    user: { type: 'string' },
  },
};

/** The gateway's own fields of the body (they arrive in state.options). */
export const gatewayOptionsSchema = {
  type: 'object',
  properties: {
    timeout: { type: 'number', exclusiveMinimum: 0 },
    headers: stringMap,
    extra_headers: stringMap,
    // OpenAI's rule: at most 16 keys of at most 64 characters, string values of at most 512
    // (plugins/credit/metadata.ts).
    metadata: {
      type: 'object',
      maxProperties: 16,
      propertyNames: { maxLength: 64 },
      additionalProperties: { type: 'string', maxLength: 512 },
    },
    api_base: { type: 'string', minLength: 1 },
    api_version: { type: 'string', minLength: 1 },
    api_key: { type: 'string', minLength: 1 },
    model_list: { type: 'array', items: { type: 'object' } },
    deployment_id: { type: 'string', minLength: 1 },
    num_retries: { type: 'integer', minimum: 0, maximum: 10 },
    context_window_fallback_dict: stringMap,
    fallbacks: {
      type: 'array',
      items: {
        anyOf: [
          { type: 'string', minLength: 1 },
          { type: 'object', required: ['model'], properties: { model: { type: 'string', minLength: 1 } } },
        ],
      },
    },
    input_cost_per_token: { type: 'number', minimum: 0 },
    output_cost_per_token: { type: 'number', minimum: 0 },
    initial_prompt_value: { type: 'string' },
    roles: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        properties: { pre_message: { type: 'string' }, post_message: { type: 'string' } },
      },
    },
    final_prompt_value: { type: 'string' },
    bos_token: { type: 'string' },
    eos_token: { type: 'string' },
    hf_model_name: { type: 'string' },
    models: { type: 'array', items: { type: 'string', minLength: 1 } },
    provider: { type: 'object', properties: { require_parameters: { type: 'boolean' } } },
    store: { type: 'boolean' },
  },
};

/** OpenAI's limits: at most 2048 inputs, none empty; token ids are non-negative integers. */
export const embeddingsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['model', 'input'],
  properties: {
    model: { type: 'string', minLength: 1 },
    input: {
      type: 'array',
      minItems: 1,
      maxItems: 2048,
      anyOf: [
        { items: { type: 'string', minLength: 1 } },
        { items: { type: 'array', minItems: 1, items: { type: 'integer', minimum: 0 } } },
      ],
    },
    encoding_format: { enum: ['float', 'base64'] },
    dimensions: { type: 'integer', minimum: 1, maximum: 65536 },
    user: { type: 'string', maxLength: 256 },
  },
} as const;
