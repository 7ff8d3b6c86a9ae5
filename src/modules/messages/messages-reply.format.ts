import { ReplyFormat, StreamWriter } from 'src/modules/chat-completions/reply-format';
import { completionToMessage } from 'src/modules/messages/anthropic-message';
import { MessagesStreamWriter } from 'src/modules/messages/messages-stream';

/** The relay's chat answers as Anthropic's Messages API gives them. */
export class MessagesReplyFormat implements ReplyFormat {
  constructor(private readonly model: string) {}

  answer(completion: Record<string, unknown>): unknown {
    return completionToMessage(completion, this.model);
  }

  streamWriter(): StreamWriter {
    return new MessagesStreamWriter(this.model);
  }
}
