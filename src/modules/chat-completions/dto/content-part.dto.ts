import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ContentPartType } from 'src/modules/chat-completions/chat-request.contract';

// The content parts of a request message (SPEC 2.3), one schema per type of the request contract.

export class ImageUrlDto {
  @ApiProperty({
    description:
      'Either an absolute HTTP(S) URL of an image, or a base64 data URI of the form data:<media_type>;base64,<data>',
  })
  url: string;
}

export class InputAudioDto {
  @ApiProperty({ format: 'byte', description: 'The audio, base64-encoded' })
  data: string;

  @ApiProperty({ example: 'wav', description: 'The encoding of the audio, e.g. wav or mp3' })
  format: string;
}

@ApiSchema({ description: 'Exactly one of file_data and file_id' })
export class FileDto {
  @ApiPropertyOptional({ description: "The file's content, e.g. a base64 data URI" })
  file_data?: string;

  @ApiPropertyOptional({ description: 'The id of a file already uploaded to the upstream' })
  file_id?: string;
}

export class TextContentPartDto {
  @ApiProperty({ enum: ['text'] satisfies ContentPartType[] })
  type: 'text';

  @ApiProperty()
  text: string;
}

@ApiSchema({ description: 'Image input: vision-capable models only' })
export class ImageContentPartDto {
  @ApiProperty({ enum: ['image_url'] satisfies ContentPartType[] })
  type: 'image_url';

  @ApiProperty({ type: ImageUrlDto })
  image_url: ImageUrlDto;
}

export class AudioContentPartDto {
  @ApiProperty({ enum: ['input_audio'] satisfies ContentPartType[] })
  type: 'input_audio';

  @ApiProperty({ type: InputAudioDto })
  input_audio: InputAudioDto;
}

export class FileContentPartDto {
  @ApiProperty({ enum: ['file'] satisfies ContentPartType[] })
  type: 'file';

  @ApiProperty({ type: FileDto })
  file: FileDto;
}

@ApiSchema({ description: "An assistant's earlier refusal, sent back as conversation history" })
export class RefusalContentPartDto {
  @ApiProperty({ enum: ['refusal'] satisfies ContentPartType[] })
  type: 'refusal';

  @ApiPropertyOptional({ description: 'Relayed to the upstream unchecked' })
  refusal?: string;
}
