import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

const CONTENT_BLOCK_SCHEMA = {
  type: 'object',
  description:
    "`text` {text}; `image` {source: {type: 'base64', media_type, data} | {type: 'url', url}} (user); " +
    "`document` {source: {type: 'text', media_type: 'text/plain', data} | {type: 'content', content}} (user); " +
    '`tool_result` {tool_use_id, content, is_error} (user); `tool_use` {id, name, input}, `thinking` and ' +
    '`redacted_thinking` (assistant). Anthropic channels receive every block as sent, `cache_control` included',
  properties: {
    type: {
      type: 'string',
      enum: ['text', 'image', 'document', 'tool_result', 'tool_use', 'thinking', 'redacted_thinking'],
    },
  },
  required: ['type'],
};

export class MessageParamDto {
  @ApiProperty({ example: 'user', enumName: 'MessageParamRole', enum: ['user', 'assistant'] })
  role: 'user' | 'assistant';

  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'array', items: CONTENT_BLOCK_SCHEMA }] })
  content: unknown;
}

export class MessageToolDto {
  @ApiProperty({ example: 'get_weather' })
  name: string;

  @ApiPropertyOptional({ example: 'The weather in a city' })
  description?: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'JSON Schema of the input',
    example: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  })
  input_schema: object;
}

export class MessageRequestDto {
  @ApiProperty({ example: 'claude-sonnet-4' })
  model: string;

  @ApiProperty({ type: [MessageParamDto] })
  messages: MessageParamDto[];

  @ApiProperty({ minimum: 1, description: 'Required, as Anthropic requires it', example: 1024 })
  max_tokens: number;

  @ApiPropertyOptional({ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }] })
  system?: unknown;

  @ApiPropertyOptional({ type: [String], example: ['\n\nHuman:'] })
  stop_sequences?: string[];

  @ApiPropertyOptional({ minimum: 0, maximum: 1, example: 1 })
  temperature?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 1, example: 1 })
  top_p?: number;

  @ApiPropertyOptional({
    description: 'Relayed to Anthropic channels only; the others have no such setting (docs/messages.md)',
    example: 40,
  })
  top_k?: number;

  @ApiPropertyOptional({ type: [MessageToolDto] })
  tools?: MessageToolDto[];

  @ApiPropertyOptional({
    type: 'object',
    description: "{type: 'auto' | 'any' | 'none'} or {type: 'tool', name}; disable_parallel_tool_use",
    additionalProperties: true,
    example: { type: 'auto' },
  })
  tool_choice?: object;

  @ApiPropertyOptional({ description: "true returns Anthropic's named server-sent events", example: false })
  stream?: boolean;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: '`user_id` is the end-user the per-user limits count',
    example: { user_id: 'user-1234' },
  })
  metadata?: object;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Relayed to Anthropic channels, which return thinking blocks; the others answer without thinking',
    example: { type: 'enabled', budget_tokens: 2048 },
  })
  thinking?: object;
}

export class MessageUsageDto {
  @ApiProperty({ example: 12 })
  input_tokens: number;

  @ApiProperty({ example: 9 })
  output_tokens: number;

  @ApiPropertyOptional({ description: 'When the upstream reported cached prompt tokens', example: 0 })
  cache_read_input_tokens?: number;

  @ApiPropertyOptional({ description: 'Prompt tokens written to the cache (Anthropic channels)', example: 0 })
  cache_creation_input_tokens?: number;
}

export class MessageDto {
  @ApiProperty({ example: 'msg_013Zva2CMHLNnXjNJJKqJ2EF' })
  id: string;

  @ApiProperty({ example: 'message', enumName: 'MessageType', enum: ['message'] })
  type: 'message';

  @ApiProperty({ example: 'assistant', enumName: 'AssistantRole', enum: ['assistant'] })
  role: 'assistant';

  @ApiProperty({ example: 'claude-sonnet-4' })
  model: string;

  @ApiProperty({
    type: 'array',
    items: {
      type: 'object',
      description:
        "`text` {text} or `tool_use` {id, name, input}; from Anthropic channels, Anthropic's own blocks (`thinking`…)",
    },
    example: [{ type: 'text', text: 'Hello! How can I help you today?' }],
  })
  content: object[];

  @ApiProperty({
    example: 'end_turn',
    enumName: 'MessageStopReason',
    enum: ['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal'],
  })
  stop_reason: string;

  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The stop sequence that matched, from Anthropic channels; null from the others (not known)',
    example: null,
  })
  stop_sequence: string | null;

  @ApiProperty({ type: MessageUsageDto })
  usage: MessageUsageDto;
}

export class MessageStreamEventDto {
  @ApiProperty({
    enumName: 'MessageStreamEventType',
    example: 'content_block_delta',
    enum: [
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
      'ping',
      'error',
    ],
    description: 'Also the SSE event name',
  })
  type: string;
}

export class AnthropicErrorDetailDto {
  @ApiProperty({
    enumName: 'AnthropicErrorType',
    example: 'invalid_request_error',
    enum: [
      'invalid_request_error',
      'authentication_error',
      'permission_error',
      'not_found_error',
      'request_too_large',
      'rate_limit_error',
      'api_error',
      'overloaded_error',
    ],
  })
  type: string;

  @ApiProperty({
    description: 'Names the field for invalid requests, e.g. `messages.0.content: …`',
    example: 'max_tokens: Field required: an integer of at least 1.',
  })
  message: string;
}

export class AnthropicErrorDto {
  @ApiProperty({ example: 'error', enumName: 'AnthropicErrorObject', enum: ['error'] })
  type: 'error';

  @ApiProperty({ type: AnthropicErrorDetailDto })
  error: AnthropicErrorDetailDto;
}
