import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ContentPartType } from 'src/modules/relay/chat-request/chat-request.contract';

// The content parts of a request message (docs/compatibility.md), one schema per type of the request contract.

export class ImageUrlDto {
  @ApiProperty({
    example: 'https://example.com/cat.png',
    description:
      'Either an absolute HTTP(S) URL of an image, or a base64 data URI of the form data:<media_type>;base64,<data>',
  })
  url: string;
}

export class InputAudioDto {
  @ApiProperty({ example: 'UklGRiQAAABXQVZF', format: 'byte', description: 'The audio, base64-encoded' })
  data: string;

  @ApiProperty({ example: 'wav', description: 'The encoding of the audio, e.g. wav or mp3' })
  format: string;
}

@ApiSchema({ description: 'Exactly one of file_data and file_id' })
export class FileDto {
  @ApiPropertyOptional({
    example: 'data:application/pdf;base64, JVBERi0xLjQK',
    description: "The file's content, e.g. a base64 data URI",
  })
  file_data?: string;

  @ApiPropertyOptional({ example: 'file-abc123', description: 'The id of a file already uploaded to the upstream' })
  file_id?: string;
}

export class TextContentPartDto {
  @ApiProperty({ example: 'text', enumName: 'TextPartType', enum: ['text'] satisfies ContentPartType[] })
  type: 'text';

  @ApiProperty({ example: 'What is in this image?' })
  text: string;
}

@ApiSchema({ description: 'Image input: vision-capable models only' })
export class ImageContentPartDto {
  @ApiProperty({ example: 'image_url', enumName: 'ImagePartType', enum: ['image_url'] satisfies ContentPartType[] })
  type: 'image_url';

  @ApiProperty({ type: ImageUrlDto })
  image_url: ImageUrlDto;
}

export class AudioContentPartDto {
  @ApiProperty({ example: 'input_audio', enumName: 'AudioPartType', enum: ['input_audio'] satisfies ContentPartType[] })
  type: 'input_audio';

  @ApiProperty({ type: InputAudioDto })
  input_audio: InputAudioDto;
}

export class FileContentPartDto {
  @ApiProperty({ example: 'file', enumName: 'FilePartType', enum: ['file'] satisfies ContentPartType[] })
  type: 'file';

  @ApiProperty({ type: FileDto })
  file: FileDto;
}

@ApiSchema({ description: "An assistant's earlier refusal, sent back as conversation history" })
export class RefusalContentPartDto {
  @ApiProperty({ example: 'refusal', enumName: 'RefusalPartType', enum: ['refusal'] satisfies ContentPartType[] })
  type: 'refusal';

  @ApiPropertyOptional({ example: 'I cannot help with that.', description: 'Relayed to the upstream unchecked' })
  refusal?: string;
}
