import { ReplyFormat, StreamWriter } from 'src/modules/chat-completions/reply-format';
import { completionToResponse } from 'src/modules/responses/responses-answer';
import { ResponseEcho } from 'src/modules/responses/responses-request';
import { ResponsesStreamWriter } from 'src/modules/responses/responses-stream';

/** The relay's chat answers as the Responses API gives them, echoing the request's fields. */
export class ResponsesReplyFormat implements ReplyFormat {
  constructor(private readonly echo: ResponseEcho) {}

  answer(completion: Record<string, unknown>): unknown {
    return completionToResponse(completion, this.echo);
  }

  streamWriter(): StreamWriter {
    return new ResponsesStreamWriter(this.echo);
  }
}
