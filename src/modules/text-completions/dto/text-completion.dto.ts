import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { StreamOptionsDto, UsageDto } from 'src/modules/relay/dto/usage.dto';
import {
  MAX_PROMPTS,
  MAX_TOKEN_ID,
  TEXT_COMPLETION_FIELDS as FIELDS,
} from 'src/modules/text-completions/text-completion-request.contract';

// These classes document the wire format for OpenAPI only: validateTextCompletionRequest checks the
// body (exact `param` names), with the bounds both read from the request contract.

const TOKEN_IDS = { type: 'array', minItems: 1, items: { type: 'integer', minimum: 0, maximum: MAX_TOKEN_ID } };
const range = (field: { minimum: number; maximum: number; default?: number }) => ({
  minimum: field.minimum,
  maximum: field.maximum,
  ...('default' in field ? { default: field.default } : {}),
});

export class TextCompletionRequestDto {
  @ApiProperty({
    description: 'A model of kind `completion` from the model list, served by an OpenAI-compatible channel',
    example: 'gpt-3.5-turbo-instruct',
  })
  model: string;

  @ApiProperty({
    description:
      `A string, up to ${MAX_PROMPTS} strings, an array of token ids, or up to ${MAX_PROMPTS} such arrays; ` +
      'each prompt is answered with its own n choices.',
    oneOf: [
      { type: 'string' },
      { type: 'array', minItems: 1, maxItems: MAX_PROMPTS, items: { type: 'string' } },
      TOKEN_IDS,
      { type: 'array', minItems: 1, maxItems: MAX_PROMPTS, items: TOKEN_IDS },
    ],
    example: 'Say this is a test',
  })
  prompt: string | string[] | number[] | number[][];

  @ApiPropertyOptional({
    type: String,
    description: 'Text after the completion (insertion); counted as prompt',
    nullable: true,
    example: 'and that is all.',
  })
  suffix?: string | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: FIELDS.max_tokens.minimum,
    default: FIELDS.max_tokens.default,
    description: "Tokens to generate per choice, at most the model's maximum; always sent upstream (16 when absent)",
    example: 16,
  })
  max_tokens?: number;

  @ApiPropertyOptional({ ...range(FIELDS.temperature), example: 1 })
  temperature?: number;

  @ApiPropertyOptional({ ...range(FIELDS.top_p), example: 1 })
  top_p?: number;

  @ApiPropertyOptional({ type: 'integer', ...range(FIELDS.n), description: 'Choices per prompt', example: 1 })
  n?: number;

  @ApiPropertyOptional({
    type: 'integer',
    ...range(FIELDS.best_of),
    description: 'Candidates generated per prompt, of which the n best are returned; at least n; not with stream',
    example: 1,
  })
  best_of?: number;

  @ApiPropertyOptional({
    default: false,
    description: 'Server-sent events of `text_completion` chunks',
    example: false,
  })
  stream?: boolean;

  @ApiPropertyOptional({ type: StreamOptionsDto })
  stream_options?: StreamOptionsDto;

  @ApiPropertyOptional({
    type: 'integer',
    ...range(FIELDS.logprobs),
    description: 'Top log probabilities per token',
    example: 2,
  })
  logprobs?: number;

  @ApiPropertyOptional({ default: false, description: 'Return the prompt before the completion', example: false })
  echo?: boolean;

  @ApiPropertyOptional({
    oneOf: [{ type: 'string' }, { type: 'array', maxItems: FIELDS.stop.maxItems, items: { type: 'string' } }],
  })
  stop?: string | string[];

  @ApiPropertyOptional({ ...range(FIELDS.presence_penalty), example: 0 })
  presence_penalty?: number;

  @ApiPropertyOptional({ ...range(FIELDS.frequency_penalty), example: 0 })
  frequency_penalty?: number;

  @ApiPropertyOptional({
    type: 'object',
    maxProperties: FIELDS.logit_bias.maxProperties,
    additionalProperties: { type: 'number', minimum: FIELDS.logit_bias.minimum, maximum: FIELDS.logit_bias.maximum },
    description: 'Token id (as a string) → bias',
    example: { '50256': -100 },
  })
  logit_bias?: Record<string, number>;

  @ApiPropertyOptional({ type: 'integer', example: 42 })
  seed?: number;

  @ApiPropertyOptional({
    maxLength: FIELDS.user.maxLength,
    description: 'End-user identifier, for per-user limits',
    example: 'user-1234',
  })
  user?: string;
}

export class TextCompletionChoiceDto {
  @ApiProperty({ example: ' This is indeed a test.' })
  text: string;

  @ApiProperty({ description: 'prompt index × n + choice index', example: 0 })
  index: number;

  @ApiProperty({
    type: 'object',
    nullable: true,
    additionalProperties: true,
    description: 'Set when the request asked for logprobs',
    example: null,
  })
  logprobs: Record<string, unknown> | null;

  @ApiProperty({
    enumName: 'TextCompletionFinishReason',
    enum: ['stop', 'length', 'content_filter'],
    nullable: true,
    description: 'null in the chunks of a stream before the last of its choice',
    example: 'stop',
  })
  finish_reason: string | null;
}

export class TextCompletionDto {
  @ApiProperty({ description: 'The same for every chunk of one stream', example: 'cmpl-8n3kq2Xw9vT4pZ' })
  id: string;

  @ApiProperty({ example: 'text_completion', enumName: 'TextCompletionObject', enum: ['text_completion'] })
  object: 'text_completion';

  @ApiProperty({ description: 'Unix time in seconds', example: 1763713800 })
  created: number;

  @ApiProperty({ description: 'Model ID that served the request', example: 'gpt-3.5-turbo-instruct' })
  model: string;

  @ApiProperty({ type: [TextCompletionChoiceDto] })
  choices: TextCompletionChoiceDto[];

  @ApiPropertyOptional({
    type: UsageDto,
    nullable: true,
    description: 'Always on a JSON answer; in a stream, only in the last chunk and with stream_options.include_usage',
  })
  usage?: UsageDto | null;
}
