import { ApiProperty, ApiPropertyOptional, ApiSchema, SchemaObject } from '@nestjs/swagger';
import { REQUEST_FIELDS } from 'src/modules/relay/chat-request/chat-request.contract';

// These classes document the wire format for OpenAPI only. The body is validated and translated by
// translateResponsesRequest (exact `param` names), then validated again as the chat body it becomes.

const TEXT_PART: SchemaObject = {
  type: 'object',
  required: ['type', 'text'],
  properties: { type: { enum: ['input_text', 'output_text'] }, text: { type: 'string' } },
};
const IMAGE_PART: SchemaObject = {
  type: 'object',
  required: ['type', 'image_url'],
  description: 'Vision-capable models only; a URL or a base64 data URI (file_id is refused: nothing is stored)',
  properties: {
    type: { enum: ['input_image'] },
    image_url: { type: 'string' },
    detail: { enum: ['auto', 'low', 'high'] },
  },
};
const FILE_PART: SchemaObject = {
  type: 'object',
  required: ['type'],
  description: 'file_data or file_id',
  properties: {
    type: { enum: ['input_file'] },
    file_data: { type: 'string' },
    file_id: { type: 'string' },
    filename: { type: 'string' },
  },
};
const REFUSAL_PART: SchemaObject = {
  type: 'object',
  required: ['type', 'refusal'],
  properties: { type: { enum: ['refusal'] }, refusal: { type: 'string' } },
};

/** The input items a request may carry. */
export const INPUT_ITEM_SCHEMA: SchemaObject = {
  oneOf: [
    {
      type: 'object',
      title: 'Message',
      required: ['role', 'content'],
      properties: {
        type: { enum: ['message'] },
        role: { enum: ['user', 'assistant', 'system', 'developer'] },
        content: {
          oneOf: [
            { type: 'string' },
            { type: 'array', minItems: 1, items: { oneOf: [TEXT_PART, IMAGE_PART, FILE_PART, REFUSAL_PART] } },
          ],
        },
      },
    },
    {
      type: 'object',
      title: 'Function call',
      description: 'A tool call the model made earlier, sent back with the conversation',
      required: ['type', 'call_id', 'name', 'arguments'],
      properties: {
        type: { enum: ['function_call'] },
        call_id: { type: 'string' },
        name: { type: 'string' },
        arguments: { type: 'string', description: 'JSON text' },
      },
    },
    {
      type: 'object',
      title: 'Function call output',
      required: ['type', 'call_id', 'output'],
      properties: {
        type: { enum: ['function_call_output'] },
        call_id: { type: 'string' },
        output: { oneOf: [{ type: 'string' }, { type: 'array', items: TEXT_PART }] },
      },
    },
    {
      type: 'object',
      title: 'Reasoning',
      description: 'Accepted and dropped: chat upstreams take no reasoning items',
      required: ['type'],
      properties: { type: { enum: ['reasoning'] } },
    },
    {
      type: 'object',
      title: 'Item reference',
      description:
        'An output item of an earlier answer of this account that was kept (`store`), replaced by that item; ' +
        'any other id is refused (400)',
      required: ['type', 'id'],
      properties: { type: { enum: ['item_reference'] }, id: { type: 'string', example: 'msg_67ccd2bf17f0' } },
    },
  ],
};

export const FUNCTION_TOOL_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['type', 'name'],
  properties: {
    type: { enum: ['function'], description: 'Only function tools; other types are refused (400, param tools)' },
    name: { type: 'string' },
    description: { type: 'string' },
    parameters: { type: 'object', additionalProperties: true, description: 'A JSON schema' },
    strict: { type: 'boolean' },
  },
};

export const TEXT_FORMAT_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['type'],
  description: '`json_schema` needs `name` and `schema`',
  properties: {
    type: { enum: ['text', 'json_object', 'json_schema'] },
    name: { type: 'string' },
    schema: { type: 'object', additionalProperties: true },
    description: { type: 'string' },
    strict: { type: 'boolean' },
  },
};

export class ResponseTextConfigDto {
  @ApiPropertyOptional({ allOf: [TEXT_FORMAT_SCHEMA], default: { type: 'text' } })
  format?: object;

  @ApiPropertyOptional({ enumName: 'ResponseTextVerbosity', enum: ['low', 'medium', 'high'], example: 'medium' })
  verbosity?: string;
}

export class ResponseReasoningConfigDto {
  @ApiPropertyOptional({
    enumName: 'ReasoningEffort',
    enum: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'],
    nullable: true,
    description: "Relayed as chat's reasoning_effort",
    example: 'medium',
  })
  effort?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'Accepted and not relayed: no reasoning summaries are produced',
    example: 'auto',
  })
  summary?: string | null;
}

@ApiSchema({
  description:
    "The input is never stored. With `store` true or absent, the answer's output items are kept (encrypted, for " +
    'RESPONSES_ITEM_TTL_DAYS) so a later input may name them as `item_reference`. `previous_response_id`, ' +
    '`conversation` and `prompt` are refused (400 naming them). `include`, `truncation`, ' +
    '`stream_options`, `top_logprobs`, `max_tool_calls` and `metadata` are accepted and not relayed. Chat-only names ' +
    '(messages, max_tokens, response_format…) are refused. Other fields are relayed to the upstream as sent.',
})
export class ResponseRequestDto {
  @ApiProperty({ description: 'A model ID from the model list (GET /v1/models)', example: 'gpt-4o-mini' })
  model: string;

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', minItems: 1, items: INPUT_ITEM_SCHEMA }],
    description: 'A user message as a string, or the conversation as input items',
    example: 'Say hello',
  })
  input: string | object[];

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'Sent first, as a system message',
    example: 'You are a helpful assistant.',
  })
  instructions?: string | null;

  @ApiPropertyOptional({
    type: 'array',
    items: FUNCTION_TOOL_SCHEMA,
    example: [
      {
        type: 'function',
        name: 'get_weather',
        description: 'The weather in a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    ],
  })
  tools?: object[];

  @ApiPropertyOptional({
    oneOf: [
      { enum: ['auto', 'none', 'required'] },
      {
        type: 'object',
        required: ['type', 'name'],
        properties: { type: { enum: ['function'] }, name: { type: 'string' } },
      },
    ],
    default: 'auto',
  })
  tool_choice?: string | object;

  @ApiPropertyOptional({ type: 'boolean', default: true, example: true })
  parallel_tool_calls?: boolean;

  @ApiPropertyOptional({ type: ResponseTextConfigDto })
  text?: ResponseTextConfigDto;

  @ApiPropertyOptional({
    ...REQUEST_FIELDS.max_completion_tokens,
    nullable: true,
    description: "At most the model's maxOutputTokens; default the model's maximum",
    example: 1024,
  })
  max_output_tokens?: number | null;

  @ApiPropertyOptional({ type: ResponseReasoningConfigDto, nullable: true })
  reasoning?: ResponseReasoningConfigDto | null;

  @ApiPropertyOptional({ example: 1, ...REQUEST_FIELDS.temperature, nullable: true })
  temperature?: number | null;

  @ApiPropertyOptional({ example: 1, ...REQUEST_FIELDS.top_p, nullable: true })
  top_p?: number | null;

  @ApiPropertyOptional({ example: false, ...REQUEST_FIELDS.stream, description: 'true returns server-sent events' })
  stream?: boolean;

  @ApiPropertyOptional({
    example: 'user-1234',
    ...REQUEST_FIELDS.user,
    description: 'End-user identifier, used for rate limiting',
  })
  user?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'Echoed in the answer; not relayed, not stored',
    example: { order: '1042' },
  })
  metadata?: Record<string, string>;

  @ApiPropertyOptional({
    description:
      'true (the default): the output items are kept for `item_reference`, unless the deployment keeps nothing ' +
      '(the answer says which); false: nothing is kept. The input is never kept either way',
    default: true,
    example: true,
  })
  store?: boolean;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: "Refused (400): the earlier request's input, which it would continue, is never stored",
    example: null,
  })
  previous_response_id?: string | null;
}
