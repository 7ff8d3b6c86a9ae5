import { ReplyFormat, StreamWriter } from 'src/modules/relay/reply-format';
import { completionToResponse } from 'src/modules/responses/responses-answer';
import { ResponseEcho } from 'src/modules/responses/responses-request';
import { ResponsesStreamWriter } from 'src/modules/responses/responses-stream';

type Json = Record<string, unknown>;

/** The relay's chat answers as the Responses API gives them, echoing the request's fields. */
export class ResponsesReplyFormat implements ReplyFormat {
  /** The answer as the client got it in full (the JSON body, or the stream's last `response`); null until then. */
  finished: Json | null = null;

  constructor(private readonly echo: ResponseEcho) {}

  answer(completion: Json): unknown {
    this.finished = completionToResponse(completion, this.echo);
    return this.finished;
  }

  streamWriter(): StreamWriter {
    return new ResponsesStreamWriter(this.echo, (response) => (this.finished = response));
  }
}
