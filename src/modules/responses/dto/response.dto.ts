import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { FUNCTION_TOOL_SCHEMA } from 'src/modules/responses/dto/response-request.dto';

export { ResponseRequestDto } from 'src/modules/responses/dto/response-request.dto';

const ITEM_STATUSES = ['in_progress', 'completed', 'incomplete'];

export class OutputTextPartDto {
  @ApiProperty({
    enumName: 'OutputTextPartType',
    enum: ['output_text', 'refusal'],
    description: 'A refusal part carries `refusal` instead of `text`',
    example: 'output_text',
  })
  type: 'output_text' | 'refusal';

  @ApiPropertyOptional({ example: 'Hello! How can I help you today?' })
  text?: string;

  @ApiPropertyOptional({ example: "I can't help with that." })
  refusal?: string;

  @ApiPropertyOptional({ type: 'array', items: { type: 'object' }, description: 'Always empty', example: [] })
  annotations?: object[];
}

export class ResponseMessageItemDto {
  @ApiProperty({ example: 'msg_67ccd2bf17f0' })
  id: string;

  @ApiProperty({ example: 'message', enumName: 'ResponseMessageItemType', enum: ['message'] })
  type: 'message';

  @ApiProperty({ example: 'completed', enumName: 'ResponseItemStatus', enum: ITEM_STATUSES })
  status: string;

  @ApiProperty({ example: 'assistant', enumName: 'AssistantRole', enum: ['assistant'] })
  role: 'assistant';

  @ApiProperty({ type: [OutputTextPartDto] })
  content: OutputTextPartDto[];
}

export class ResponseFunctionCallItemDto {
  @ApiProperty({ example: 'fc_67ccd2bf17f0' })
  id: string;

  @ApiProperty({ example: 'function_call', enumName: 'ResponseFunctionCallItemType', enum: ['function_call'] })
  type: 'function_call';

  @ApiProperty({ example: 'completed', enumName: 'ResponseItemStatus', enum: ITEM_STATUSES })
  status: string;

  @ApiProperty({
    description: 'Send it back with the function_call_output item that answers the call',
    example: 'call_Dk3mW1q9Zx7a',
  })
  call_id: string;

  @ApiProperty({ example: 'get_weather' })
  name: string;

  @ApiProperty({ description: 'JSON text', example: '{"city":"Paris"}' })
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
  @ApiProperty({ example: 12 })
  input_tokens: number;

  @ApiProperty({ type: 'object', properties: { cached_tokens: { type: 'integer' } }, example: { cached_tokens: 0 } })
  input_tokens_details: { cached_tokens: number };

  @ApiProperty({ example: 9 })
  output_tokens: number;

  @ApiProperty({
    type: 'object',
    properties: { reasoning_tokens: { type: 'integer' } },
    example: { reasoning_tokens: 0 },
  })
  output_tokens_details: { reasoning_tokens: number };

  @ApiProperty({ example: 21 })
  total_tokens: number;
}

export class ResponseDto {
  @ApiProperty({ example: 'resp_67ccd2bed1ec8190' })
  id: string;

  @ApiProperty({ example: 'response', enumName: 'ResponseObject', enum: ['response'] })
  object: 'response';

  @ApiProperty({ description: 'Unix time in seconds', example: 1763713800 })
  created_at: number;

  @ApiProperty({
    example: 'completed',
    enumName: 'ResponseStatus',
    enum: ['in_progress', 'completed', 'incomplete', 'failed'],
  })
  status: string;

  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: { code: { type: 'string' }, message: { type: 'string' } },
    description: 'Set when the status is failed',
    example: null,
  })
  error: { code: string; message: string } | null;

  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: { reason: { enum: ['max_output_tokens', 'content_filter'] } },
    description: 'Set when the status is incomplete',
    example: null,
  })
  incomplete_details: { reason: string } | null;

  @ApiProperty({ example: 'gpt-4o-mini' })
  model: string;

  @ApiProperty({
    type: 'array',
    items: OUTPUT_ITEM_SCHEMA,
    example: [
      {
        id: 'msg_67ccd2bf17f0',
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Hello! How can I help you today?', annotations: [] }],
      },
    ],
  })
  output: object[];

  @ApiProperty({ type: ResponseUsageDto, nullable: true })
  usage: ResponseUsageDto | null;

  @ApiProperty({
    type: Boolean,
    description:
      'Whether the output items are kept (never the input), so later requests may send them as `item_reference` ' +
      'and GET/DELETE /v1/responses/{id} find them: true unless the request said `store: false` or the ' +
      'deployment keeps nothing (RESPONSES_STORE=false)',
    example: true,
  })
  store: boolean;

  @ApiProperty({ type: String, nullable: true, example: 'You are a helpful assistant.' })
  instructions: string | null;

  @ApiProperty({ type: Number, nullable: true, example: 1024 })
  max_output_tokens: number | null;

  @ApiProperty({ type: 'array', items: FUNCTION_TOOL_SCHEMA, example: [] })
  tools: object[];

  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'object' }] })
  tool_choice: string | object;

  @ApiProperty({ type: 'object', additionalProperties: true, example: { format: { type: 'text' } } })
  text: object;

  @ApiProperty({
    type: 'object',
    properties: { effort: { type: 'string', nullable: true } },
    example: { effort: null },
  })
  reasoning: object;

  @ApiProperty({ type: Number, nullable: true, example: 1 })
  temperature: number | null;

  @ApiProperty({ type: Number, nullable: true, example: 1 })
  top_p: number | null;

  @ApiProperty({ example: true })
  parallel_tool_calls: boolean;

  @ApiProperty({
    type: String,
    nullable: true,
    description: "Always null: a request's input is never kept, so previous_response_id is refused",
    example: null,
  })
  previous_response_id: null;

  @ApiProperty({ type: String, nullable: true, example: 'user-1234' })
  user: string | null;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { order: '1042' } })
  metadata: Record<string, string>;
}

/** The answer to DELETE /v1/responses/{id}. */
export class DeletedResponseDto {
  @ApiProperty({ example: 'resp_67ccd2bed1ec8190' })
  id: string;

  @ApiProperty({ example: 'response', enumName: 'ResponseObject', enum: ['response'] })
  object: 'response';

  @ApiProperty({ example: true })
  deleted: true;
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
  @ApiProperty({
    enumName: 'ResponseStreamEventType',
    enum: RESPONSE_STREAM_EVENT_TYPES,
    example: 'response.output_text.delta',
  })
  type: string;

  @ApiProperty({ description: 'Counts the events of the stream from 0', example: 4 })
  sequence_number: number;

  @ApiPropertyOptional({
    type: ResponseDto,
    description: 'In response.created, .in_progress, .completed, .incomplete and .failed',
  })
  response?: ResponseDto;

  @ApiPropertyOptional({ description: 'In the item, part, delta and done events', example: 0 })
  output_index?: number;

  @ApiPropertyOptional({ example: 'msg_67ccd2bf17f0' })
  item_id?: string;

  @ApiPropertyOptional({ example: 0 })
  content_index?: number;

  @ApiPropertyOptional({ ...OUTPUT_ITEM_SCHEMA, description: 'In response.output_item.added and .done' })
  item?: object;

  @ApiPropertyOptional({ type: OutputTextPartDto })
  part?: OutputTextPartDto;

  @ApiPropertyOptional({ description: 'A piece of text, or of function-call arguments', example: 'Hello' })
  delta?: string;

  @ApiPropertyOptional({ description: 'In response.output_text.done', example: 'Hello! How can I help you today?' })
  text?: string;

  @ApiPropertyOptional({ description: 'In response.function_call_arguments.done', example: '{"city":"Paris"}' })
  arguments?: string;
}
