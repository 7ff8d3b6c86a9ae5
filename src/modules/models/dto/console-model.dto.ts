import { ApiProperty } from '@nestjs/swagger';
import { ApiMoney } from 'src/common/openapi/money-property';

/** A model as a customer sees it: what it costs and what the account may send it. */
export class ConsoleModelDto {
  @ApiProperty({ example: 'gpt-4o' })
  id: string;

  @ApiMoney({ description: 'USD per one million prompt tokens', example: '2.5' })
  inputPrice: string;

  @ApiMoney({ description: 'USD per one million completion tokens', example: '10' })
  outputPrice: string;

  @ApiMoney({
    description:
      'USD per one million cached prompt tokens. The gateway bills cached prompt tokens at the input price for now, so this is always inputPrice.',
    example: '2.5',
  })
  cachedInputPrice: string;

  @ApiProperty({ description: 'Whether the model accepts images', example: true })
  vision: boolean;

  @ApiProperty({ description: 'The most completion tokens one request may ask for', example: 16384 })
  maxOutputTokens: number;

  @ApiProperty({
    description: "This account's requests per minute on the model, after the operator's overrides",
    example: 60,
  })
  rpm: number;

  @ApiProperty({
    description: "This account's tokens per minute on the model, after the operator's overrides",
    example: 100000,
  })
  tpm: number;
}

export class ConsoleModelListDto {
  @ApiProperty({ type: [ConsoleModelDto] })
  data: ConsoleModelDto[];
}
