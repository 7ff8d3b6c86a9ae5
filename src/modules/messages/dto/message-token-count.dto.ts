import { ApiProperty, ApiPropertyOptional, PickType } from '@nestjs/swagger';
import { MessageRequestDto } from 'src/modules/messages/dto/message.dto';

/** Anthropic's count request: a message request's prompt fields, without `max_tokens`. */
export class MessageCountTokensRequestDto extends PickType(MessageRequestDto, [
  'model',
  'messages',
  'system',
  'tools',
  'tool_choice',
] as const) {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: "Counted by Anthropic channels, which count thinking; the gateway's own count ignores it",
    example: { type: 'enabled', budget_tokens: 2048 },
  })
  thinking?: object;
}

export class MessageTokenCountDto {
  @ApiProperty({
    type: 'integer',
    description:
      "The body's input tokens (system, messages, tools, images): Anthropic's own count on an Anthropic " +
      "channel, otherwise the gateway's, which errs high",
    example: 2095,
  })
  input_tokens: number;
}
