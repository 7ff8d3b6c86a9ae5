import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

// These classes document the wire format for OpenAPI only. The body is validated by
// validateChatRequest (exact `param` names, no stripping) because fields the gateway does not know
// (tools, response_format, seed, …) must reach the upstream untouched.

export class ImageUrlDto {
  @ApiProperty({ description: 'An absolute http(s) URL, or data:<media_type>;base64,<data>' })
  url: string;
}

export class ContentPartDto {
  @ApiProperty({ enum: ['text', 'image_url'] })
  type: 'text' | 'image_url';

  @ApiPropertyOptional({ description: 'For type text' })
  text?: string;

  @ApiPropertyOptional({ type: ImageUrlDto, description: 'For type image_url (vision-capable models only)' })
  image_url?: ImageUrlDto;
}

export class ChatMessageDto {
  @ApiProperty({ enum: ['system', 'user', 'assistant', 'developer', 'tool'], example: 'user' })
  role: string;

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { $ref: '#/components/schemas/ContentPartDto' } }],
    example: 'Hello!',
  })
  content: string | ContentPartDto[];
}

export class StreamOptionsDto {
  @ApiPropertyOptional({ description: 'Send a last chunk with `usage` before [DONE]' })
  include_usage?: boolean;
}

export class ChatCompletionRequestDto {
  @ApiProperty({ description: 'A model id from GET /v1/models', example: 'gpt-4o' })
  model: string;

  @ApiProperty({ type: [ChatMessageDto], minItems: 1 })
  messages: ChatMessageDto[];

  @ApiPropertyOptional({ minimum: 0, maximum: 2, default: 1 })
  temperature?: number;

  @ApiPropertyOptional({ minimum: 1, description: "At most the model's maxOutputTokens; default the model's maximum" })
  max_tokens?: number;

  @ApiPropertyOptional({
    minimum: 1,
    description: "Like max_tokens, at most the model's maxOutputTokens; when both are sent, the larger one is held",
  })
  max_completion_tokens?: number;

  @ApiPropertyOptional({
    enum: ['auto', 'default'],
    description: "Other tiers are refused (400, param service_tier): they cost more than the model's prices",
  })
  service_tier?: string;

  @ApiPropertyOptional({ minimum: 0, maximum: 1, default: 1 })
  top_p?: number;

  @ApiPropertyOptional({ default: false, description: 'true answers with server-sent events' })
  stream?: boolean;

  @ApiPropertyOptional({ type: StreamOptionsDto })
  stream_options?: StreamOptionsDto;

  @ApiPropertyOptional({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 4 }],
    nullable: true,
  })
  stop?: string | string[];

  @ApiPropertyOptional({ minimum: -2, maximum: 2, default: 0 })
  presence_penalty?: number;

  @ApiPropertyOptional({ minimum: -2, maximum: 2, default: 0 })
  frequency_penalty?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 128, default: 1 })
  n?: number;

  @ApiPropertyOptional({ description: 'End-user id, for monitoring and rate limiting' })
  user?: string;
}

export class UsageDto {
  @ApiProperty()
  prompt_tokens: number;

  @ApiProperty()
  completion_tokens: number;

  @ApiProperty()
  total_tokens: number;
}

export class AssistantMessageDto {
  @ApiProperty({ enum: ['assistant'] })
  role: 'assistant';

  @ApiProperty({ type: String, nullable: true })
  content: string | null;
}

export class ChoiceDto {
  @ApiProperty()
  index: number;

  @ApiProperty({ type: AssistantMessageDto })
  message: AssistantMessageDto;

  @ApiProperty({ enum: ['stop', 'length', 'content_filter', 'tool_calls'] })
  finish_reason: string;
}

export class ChatCompletionDto {
  @ApiProperty({ example: 'chatcmpl-123' })
  id: string;

  @ApiProperty({ enum: ['chat.completion'] })
  object: 'chat.completion';

  @ApiProperty({ description: 'Unix time in seconds' })
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
  @ApiPropertyOptional({ enum: ['assistant'] })
  role?: 'assistant';

  @ApiPropertyOptional()
  content?: string;
}

export class ChunkChoiceDto {
  @ApiProperty()
  index: number;

  @ApiProperty({ type: ChunkDeltaDto, description: 'Empty in the final chunk' })
  delta: ChunkDeltaDto;

  @ApiProperty({ type: String, nullable: true, enum: ['stop', 'length', 'content_filter', 'tool_calls'] })
  finish_reason: string | null;
}

/** One `data:` event of a streamed completion; the stream ends with `data: [DONE]`. */
export class ChatCompletionChunkDto {
  @ApiProperty({ description: 'The same for every chunk of one stream' })
  id: string;

  @ApiProperty({ enum: ['chat.completion.chunk'] })
  object: 'chat.completion.chunk';

  @ApiProperty()
  created: number;

  @ApiProperty()
  model: string;

  @ApiProperty({ type: [ChunkChoiceDto] })
  choices: ChunkChoiceDto[];

  @ApiPropertyOptional({ type: UsageDto, nullable: true, description: 'Only with stream_options.include_usage' })
  usage?: UsageDto | null;
}
