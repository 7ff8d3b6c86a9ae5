import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

// The OpenAI shapes every OpenAI-style surface shares (chat completions, text completions); OpenAPI only.

export class StreamOptionsDto {
  @ApiPropertyOptional({ example: true, description: 'Send a last chunk with `usage` before [DONE]' })
  include_usage?: boolean;
}

export class UsageDto {
  @ApiProperty({ example: 8 })
  prompt_tokens: number;

  @ApiProperty({ example: 5 })
  completion_tokens: number;

  @ApiProperty({ example: 13 })
  total_tokens: number;

  @ApiPropertyOptional({
    type: 'object',
    properties: { cached_tokens: { type: 'integer' } },
    example: { cached_tokens: 0 },
    description:
      "Of prompt_tokens, those the upstream read from its cache (billed at the model's cached price). " +
      'Present when the upstream reports it (OpenAI, Anthropic, Gemini).',
  })
  prompt_tokens_details?: { cached_tokens: number };

  @ApiPropertyOptional({
    type: 'object',
    properties: { reasoning_tokens: { type: 'integer' } },
    example: { reasoning_tokens: 0 },
    description:
      'Of completion_tokens, those spent reasoning (billed as completion tokens). Present when the upstream ' +
      'reports it (OpenAI, Gemini); Anthropic does not count thinking apart.',
  })
  completion_tokens_details?: { reasoning_tokens: number };
}
