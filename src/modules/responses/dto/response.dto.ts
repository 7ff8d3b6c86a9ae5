import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { FUNCTION_TOOL_SCHEMA } from 'src/modules/responses/dto/response-request.dto';

export { ResponseRequestDto } from 'src/modules/responses/dto/response-request.dto';

export class OutputTextPartDto {
  @ApiProperty({ enum: ['output_text', 'refusal'], description: 'A refusal part carries `refusal` instead of `text`' })
  type: 'output_text' | 'refusal';

  @ApiPropertyOptional()
  text?: string;

  @ApiPropertyOptional()
  refusal?: string;

  @ApiPropertyOptional({ type: 'array', items: { type: 'object' } })
  annotations?: object[];
}

export class ResponseMessageItemDto {
  @ApiProperty({ example: 'msg_67ccd2bf17f0' })
  id: string;

  @ApiProperty({ enum: ['message'] })
  type: 'message';

  @ApiProperty({ enum: ['in_progress', 'completed', 'incomplete'] })
  status: string;

  @ApiProperty({ enum: ['assistant'] })
  role: 'assistant';

  @ApiProperty({ type: [OutputTextPartDto] })
  content: OutputTextPartDto[];
}

export class ResponseFunctionCallItemDto {
  @ApiProperty({ example: 'fc_67ccd2bf17f0' })
  id: string;

  @ApiProperty({ enum: ['function_call'] })
  type: 'function_call';

  @ApiProperty({ enum: ['in_progress', 'completed', 'incomplete'] })
  status: string;

  @ApiProperty({ description: 'Send it back with the function_call_output item that answers the call' })
  call_id: string;

  @ApiProperty()
  name: string;

  @ApiProperty({ description: 'JSON text' })
  arguments: string;
}

export const RESPONSE_ITEM_DTOS = [ResponseMessageItemDto, ResponseFunctionCallItemDto];

const OUTPUT_ITEM_SCHEMA = {
  oneOf: RESPONSE_ITEM_DTOS.map((dto) => ({ $ref: getSchemaPath(dto) })),
  discriminator: {
    propertyName: 'type',
    mapping: {
      message: getSchemaPath(ResponseMessageItemDto),
      function_call: getSchemaPath(ResponseFunctionCallItemDto),
    },
  },
};

export class ResponseUsageDto {
  @ApiProperty()
  input_tokens: number;

  @ApiProperty({ type: 'object', properties: { cached_tokens: { type: 'integer' } } })
  input_tokens_details: { cached_tokens: number };

  @ApiProperty()
  output_tokens: number;

  @ApiProperty({ type: 'object', properties: { reasoning_tokens: { type: 'integer' } } })
  output_tokens_details: { reasoning_tokens: number };

  @ApiProperty()
  total_tokens: number;
}

export class ResponseDto {
  @ApiProperty({ example: 'resp_67ccd2bed1ec8190' })
  id: string;

  @ApiProperty({ enum: ['response'] })
  object: 'response';

  @ApiProperty({ description: 'Unix time in seconds' })
  created_at: number;

  @ApiProperty({ enum: ['in_progress', 'completed', 'incomplete', 'failed'] })
  status: string;

  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: { code: { type: 'string' }, message: { type: 'string' } },
    description: 'Set when the status is failed',
  })
  error: { code: string; message: string } | null;

  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: { reason: { enum: ['max_output_tokens', 'content_filter'] } },
  })
  incomplete_details: { reason: string } | null;

  @ApiProperty({ example: 'gpt-4o-mini' })
  model: string;

  @ApiProperty({ type: 'array', items: OUTPUT_ITEM_SCHEMA })
  output: object[];

  @ApiProperty({ type: ResponseUsageDto, nullable: true })
  usage: ResponseUsageDto | null;

  @ApiProperty({ enum: [false], description: 'Nothing is stored' })
  store: false;

  @ApiProperty({ type: String, nullable: true })
  instructions: string | null;

  @ApiProperty({ type: Number, nullable: true })
  max_output_tokens: number | null;

  @ApiProperty({ type: 'array', items: FUNCTION_TOOL_SCHEMA })
  tools: object[];

  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'object' }] })
  tool_choice: string | object;

  @ApiProperty({ type: 'object', additionalProperties: true })
  text: object;

  @ApiProperty({ type: 'object', properties: { effort: { type: 'string', nullable: true } } })
  reasoning: object;

  @ApiProperty({ type: Number, nullable: true })
  temperature: number | null;

  @ApiProperty({ type: Number, nullable: true })
  top_p: number | null;

  @ApiProperty()
  parallel_tool_calls: boolean;

  @ApiProperty({ type: String, nullable: true })
  previous_response_id: null;

  @ApiProperty({ type: String, nullable: true })
  user: string | null;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  metadata: Record<string, string>;
}

export const RESPONSE_STREAM_EVENT_TYPES = [
  'response.created',
  'response.in_progress',
  'response.output_item.added',
  'response.content_part.added',
  'response.output_text.delta',
  'response.output_text.done',
  'response.refusal.delta',
  'response.refusal.done',
  'response.content_part.done',
  'response.function_call_arguments.delta',
  'response.function_call_arguments.done',
  'response.output_item.done',
  'response.completed',
  'response.incomplete',
  'response.failed',
] as const;

/** One event of a stream: `event: <type>` and `data: <this object>`. */
export class ResponseStreamEventDto {
  @ApiProperty({ enum: RESPONSE_STREAM_EVENT_TYPES })
  type: string;

  @ApiProperty({ description: 'Counts the events of the stream from 0' })
  sequence_number: number;

  @ApiPropertyOptional({
    type: ResponseDto,
    description: 'In response.created, .in_progress, .completed, .incomplete and .failed',
  })
  response?: ResponseDto;

  @ApiPropertyOptional({ description: 'In the item, part, delta and done events' })
  output_index?: number;

  @ApiPropertyOptional()
  item_id?: string;

  @ApiPropertyOptional()
  content_index?: number;

  @ApiPropertyOptional({ ...OUTPUT_ITEM_SCHEMA, description: 'In response.output_item.added and .done' })
  item?: object;

  @ApiPropertyOptional({ type: OutputTextPartDto })
  part?: OutputTextPartDto;

  @ApiPropertyOptional({ description: 'A piece of text, or of function-call arguments' })
  delta?: string;

  @ApiPropertyOptional({ description: 'In response.output_text.done' })
  text?: string;

  @ApiPropertyOptional({ description: 'In response.function_call_arguments.done' })
  arguments?: string;
}
