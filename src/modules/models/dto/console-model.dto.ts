import { ApiProperty } from '@nestjs/swagger';
import { ApiMoney } from 'src/common/openapi/money-property';

/** A model as a customer sees it: what it costs this account (its group's prices) and what the account may send it. */
export class ConsoleModelDto {
  @ApiProperty({ example: 'gpt-4o' })
  id: string;

  @ApiMoney({ description: 'USD per one million prompt tokens', example: '2.5' })
  inputPrice: string;

  @ApiMoney({ description: 'USD per one million completion tokens', example: '10' })
  outputPrice: string;

  @ApiMoney({
    description:
      "USD per one million prompt tokens read from the upstream's cache; the input price when the model has none of its own",
    example: '1.25',
  })
  cachedInputPrice: string;

  @ApiMoney({
    description:
      "USD per one million prompt tokens written to the upstream's cache; the input price when the model has none of its own",
    example: '2.5',
  })
  cacheWriteInputPrice: string;

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
