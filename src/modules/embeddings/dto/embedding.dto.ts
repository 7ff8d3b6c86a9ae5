import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { REQUEST_FIELDS } from 'src/modules/relay/chat-request/chat-request.contract';
import {
  ENCODING_FORMATS,
  EncodingFormat,
  MAX_DIMENSIONS,
  MAX_EMBEDDING_INPUTS,
  MAX_TOKEN_ID,
  MAX_TOKENS_PER_INPUT,
} from 'src/modules/embeddings/embedding-request.contract';

// These classes document the wire format for OpenAPI only: validateEmbeddingRequest checks the body
// (exact `param` names), with the bounds both read from the request contract.

const TOKEN_IDS = {
  type: 'array',
  minItems: 1,
  maxItems: MAX_TOKENS_PER_INPUT,
  items: { type: 'integer', minimum: 0, maximum: MAX_TOKEN_ID },
};

export class EmbeddingRequestDto {
  @ApiProperty({ description: 'An embedding model from the model list', example: 'text-embedding-3-small' })
  model: string;

  @ApiProperty({
    description:
      `Text or token ids to embed: a non-empty string, up to ${MAX_EMBEDDING_INPUTS} non-empty strings, an array ` +
      `of token ids, or up to ${MAX_EMBEDDING_INPUTS} such arrays (each of 1 to ${MAX_TOKENS_PER_INPUT} ids). ` +
      'Gemini channels take strings only, and at most 100 inputs a request.',
    oneOf: [
      { type: 'string', minLength: 1 },
      { type: 'array', minItems: 1, maxItems: MAX_EMBEDDING_INPUTS, items: { type: 'string', minLength: 1 } },
      TOKEN_IDS,
      { type: 'array', minItems: 1, maxItems: MAX_EMBEDDING_INPUTS, items: TOKEN_IDS },
    ],
    example: 'The food was delicious and the waiter was kind.',
  })
  input: string | string[] | number[] | number[][];

  @ApiPropertyOptional({
    enumName: 'EmbeddingEncodingFormat',
    enum: ENCODING_FORMATS,
    default: 'float',
    example: 'float',
    description:
      '`base64`: each vector as little-endian float32 bytes in base64 (made by the gateway when the upstream gives floats only)',
  })
  encoding_format?: EncodingFormat;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_DIMENSIONS,
    description: 'Length of each vector, for models that can shorten theirs',
    example: 512,
  })
  dimensions?: number;

  @ApiPropertyOptional({
    maxLength: REQUEST_FIELDS.user.maxLength,
    description: 'End-user identifier, for monitoring and per-user limits',
    example: 'user-1234',
  })
  user?: string;
}

export class EmbeddingDto {
  @ApiProperty({ example: 'embedding', enumName: 'EmbeddingObject', enum: ['embedding'] })
  object: 'embedding';

  @ApiProperty({ description: 'Position of its input in the request', example: 0 })
  index: number;

  @ApiProperty({
    oneOf: [
      { type: 'array', items: { type: 'number' } },
      { type: 'string', format: 'byte' },
    ],
    description: 'The vector: numbers, or base64 float32 bytes with `encoding_format: base64`',
  })
  embedding: number[] | string;
}

export class EmbeddingUsageDto {
  @ApiProperty({ description: 'Input tokens billed', example: 9 })
  prompt_tokens: number;

  @ApiProperty({ example: 9 })
  total_tokens: number;
}

export class EmbeddingListDto {
  @ApiProperty({ example: 'list', enumName: 'ListObject', enum: ['list'] })
  object: 'list';

  @ApiProperty({ type: [EmbeddingDto] })
  data: EmbeddingDto[];

  @ApiProperty({ description: 'Model ID that served the request', example: 'text-embedding-3-small' })
  model: string;

  @ApiProperty({ type: EmbeddingUsageDto })
  usage: EmbeddingUsageDto;
}
