import { Type } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import {
  ACCEPTED_MESSAGE_ROLES,
  ContentPartType,
  MAX_JSON_VALUES,
  MAX_NESTING_DEPTH,
  MessageRole,
  REQUEST_FIELDS,
  SERVICE_TIERS,
} from 'src/modules/relay/chat-request/chat-request.contract';
import {
  AudioContentPartDto,
  FileContentPartDto,
  ImageContentPartDto,
  RefusalContentPartDto,
  TextContentPartDto,
} from 'src/modules/chat-completions/dto/content-part.dto';
import { StreamOptionsDto, UsageDto } from 'src/modules/relay/dto/usage.dto';

// These classes document the wire format for OpenAPI only. The body is validated by
// validateChatRequest (exact `param` names, no stripping) because fields the gateway does not know
// (tools, response_format, seed, …) must reach the upstream untouched. Roles, part types and bounds
// come from the request contract both read.

/** The schema of each part type: a type of the contract without one here, or one the contract lacks, does not compile. */
export const CONTENT_PART_DTOS = {
  text: TextContentPartDto,
  image_url: ImageContentPartDto,
  input_audio: AudioContentPartDto,
  file: FileContentPartDto,
  refusal: RefusalContentPartDto,
} satisfies Record<ContentPartType, Type<unknown>>;

export type ContentPartDto = InstanceType<(typeof CONTENT_PART_DTOS)[ContentPartType]>;

/** One content part, told apart by its `type`; the controller registers the part schemas as extra models. */
export const CONTENT_PART_SCHEMA = {
  oneOf: Object.values(CONTENT_PART_DTOS).map((dto) => ({ $ref: getSchemaPath(dto) })),
  discriminator: {
    propertyName: 'type',
    mapping: Object.fromEntries(Object.entries(CONTENT_PART_DTOS).map(([type, dto]) => [type, getSchemaPath(dto)])),
  },
};

export class ChatMessageDto {
  @ApiProperty({
    enumName: 'ChatRole',
    enum: [...ACCEPTED_MESSAGE_ROLES],
    example: 'user',
    description: '`function` is the legacy form of `tool`: still accepted, no longer offered',
  })
  role: MessageRole;

  @ApiPropertyOptional({
    oneOf: [{ type: 'string' }, { type: 'array', minItems: 1, items: CONTENT_PART_SCHEMA }],
    nullable: true,
    example: 'Hello!',
    description:
      'Required, except in an assistant message with tool_calls or function_call. ' +
      'The array form is used for image, audio and file input.',
  })
  content?: string | ContentPartDto[] | null;

  @ApiPropertyOptional({
    example: 'call_abc123',
    description: 'Required in a tool message: the id of the tool call it answers',
  })
  tool_call_id?: string;

  @ApiPropertyOptional({
    example: [
      { id: 'call_abc123', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ],
    type: 'array',
    items: { type: 'object' },
    description: "An assistant message's tool calls, relayed as sent",
  })
  tool_calls?: object[];

  @ApiPropertyOptional({
    example: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    type: 'object',
    additionalProperties: true,
    description: 'The legacy form of tool_calls, relayed as sent',
  })
  function_call?: object;
}

@ApiSchema({
  description:
    'Fields not listed here (tools, response_format, seed, …) are relayed to the upstream as sent. ' +
    `A body nested deeper than ${MAX_NESTING_DEPTH} levels, or holding more than ${MAX_JSON_VALUES} JSON values, is refused.`,
})
export class ChatCompletionRequestDto {
  @ApiProperty({
    ...REQUEST_FIELDS.model,
    description: 'A model ID from the model list (GET /v1/models)',
    example: 'gpt-4o',
  })
  model: string;

  @ApiProperty({
    type: [ChatMessageDto],
    minItems: REQUEST_FIELDS.messages.minItems,
    description: 'At least one entry (an empty array is rejected)',
  })
  messages: ChatMessageDto[];

  @ApiPropertyOptional({ example: 1, ...REQUEST_FIELDS.temperature })
  temperature?: number;

  @ApiPropertyOptional({
    example: 1024,
    ...REQUEST_FIELDS.max_tokens,
    description: "Maximum generated tokens, at most the model's maxOutputTokens; default the model's maximum",
  })
  max_tokens?: number;

  @ApiPropertyOptional({
    example: 1024,
    ...REQUEST_FIELDS.max_completion_tokens,
    description: "Like max_tokens, at most the model's maxOutputTokens; when both are sent, the larger one is held",
  })
  max_completion_tokens?: number;

  @ApiPropertyOptional({
    example: 'auto',
    enumName: 'ServiceTier',
    ...REQUEST_FIELDS.service_tier,
    enum: [...SERVICE_TIERS],
    description: "Other tiers are refused (400, param service_tier): they cost more than the model's prices",
  })
  service_tier?: string;

  @ApiPropertyOptional({
    example: 1,
    ...REQUEST_FIELDS.top_p,
    description: 'Nucleus sampling; adjust either this or temperature, not both',
  })
  top_p?: number;

  @ApiPropertyOptional({ example: false, ...REQUEST_FIELDS.stream, description: 'true returns server-sent events' })
  stream?: boolean;

  @ApiPropertyOptional({ type: StreamOptionsDto, description: 'Only with stream true' })
  stream_options?: StreamOptionsDto;

  @ApiPropertyOptional({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: REQUEST_FIELDS.stop.maxItems }],
    nullable: true,
    default: null,
    description: 'Generation stops on a match',
  })
  stop?: string | string[] | null;

  @ApiPropertyOptional({ example: 0, ...REQUEST_FIELDS.presence_penalty })
  presence_penalty?: number;

  @ApiPropertyOptional({ example: 0, ...REQUEST_FIELDS.frequency_penalty })
  frequency_penalty?: number;

  @ApiPropertyOptional({ example: 1, ...REQUEST_FIELDS.n, description: 'Number of candidate answers' })
  n?: number;

  @ApiPropertyOptional({
    example: 'user-1234',
    ...REQUEST_FIELDS.user,
    description: 'End-user identifier, used for monitoring and rate limiting',
  })
  user?: string;
}

export class AssistantMessageDto {
  @ApiProperty({ example: 'assistant', enumName: 'AssistantRole', enum: ['assistant'] })
  role: 'assistant';

  @ApiProperty({ example: 'Hello! How can I help?', type: String, nullable: true })
  content: string | null;
}

export class ChoiceDto {
  @ApiProperty({ example: 0 })
  index: number;

  @ApiProperty({ type: AssistantMessageDto })
  message: AssistantMessageDto;

  @ApiProperty({ example: 'stop', enumName: 'FinishReason', enum: ['stop', 'length', 'content_filter', 'tool_calls'] })
  finish_reason: string;
}

export class ChatCompletionDto {
  @ApiProperty({ example: 'chatcmpl-123' })
  id: string;

  @ApiProperty({ example: 'chat.completion', enumName: 'ChatCompletionObject', enum: ['chat.completion'] })
  object: 'chat.completion';

  @ApiProperty({ example: 1795500000, description: 'Unix time in seconds' })
  created: number;

  @ApiProperty({ example: 'gpt-4o' })
  model: string;

  @ApiProperty({ type: [ChoiceDto] })
  choices: ChoiceDto[];

  @ApiProperty({ type: UsageDto })
  usage: UsageDto;

  @ApiProperty({ example: 'fp_44709d6fcb' })
  system_fingerprint: string;
}

export class ChunkDeltaDto {
  @ApiPropertyOptional({ example: 'assistant', enumName: 'AssistantRole', enum: ['assistant'] })
  role?: 'assistant';

  @ApiPropertyOptional({ example: 'Hello! How can I help?' })
  content?: string;
}

export class ChunkChoiceDto {
  @ApiProperty({ example: 0 })
  index: number;

  @ApiProperty({ type: ChunkDeltaDto, description: 'Empty in the final chunk' })
  delta: ChunkDeltaDto;

  @ApiProperty({
    example: 'stop',
    enumName: 'FinishReason',
    nullable: true,
    enum: ['stop', 'length', 'content_filter', 'tool_calls'],
  })
  finish_reason: string | null;
}

/** One `data:` event of a streamed completion; the stream ends with `data: [DONE]`. */
export class ChatCompletionChunkDto {
  @ApiProperty({
    example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c',
    description: 'The same for every chunk of one stream',
  })
  id: string;

  @ApiProperty({
    example: 'chat.completion.chunk',
    enumName: 'ChatCompletionChunkObject',
    enum: ['chat.completion.chunk'],
  })
  object: 'chat.completion.chunk';

  @ApiProperty({ example: 1795500000 })
  created: number;

  @ApiProperty({ example: 'gpt-4o' })
  model: string;

  @ApiProperty({ type: [ChunkChoiceDto] })
  choices: ChunkChoiceDto[];

  @ApiPropertyOptional({ type: UsageDto, nullable: true, description: 'Only with stream_options.include_usage' })
  usage?: UsageDto | null;
}
