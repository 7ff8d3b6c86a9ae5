import { FastifyReply } from 'fastify';
import { ApiKeyPrincipal } from 'src/common/decorators/auth.decorators';
import { CompletionRelay } from 'src/modules/relay/completion-relay.service';
import { CompletionAdmission } from 'src/modules/relay/admission/completion-admission.service';
import { ResponsesReplyFormat } from 'src/modules/responses/responses-reply.format';
import { ResponsesService } from 'src/modules/responses/responses.service';
import { StoredResponses } from 'src/modules/responses/stored/stored-responses.service';
import { mockOf } from 'test/support/test-service';

const principal = { accountId: 'account-1' } as ApiKeyPrincipal;
const reply = {} as FastifyReply;
const KEPT = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  content: [{ type: 'output_text', text: 'Kept answer.' }],
};

function setUp(keeping = true) {
  const admission = mockOf(CompletionAdmission);
  const chat = mockOf(CompletionRelay);
  const stored = mockOf(StoredResponses);
  Object.defineProperty(stored, 'enabled', { value: keeping });
  stored.resolveReferences.mockImplementation((_account, input) =>
    Promise.resolve(
      Array.isArray(input)
        ? input.map((item: { type?: string }) => (item.type === 'item_reference' ? KEPT : item))
        : input,
    ),
  );
  stored.keep.mockResolvedValue(undefined);
  // The relay, as the chat service runs it: the format answers (and so records the answer it gave).
  chat.complete.mockImplementation((_admitted, _reply, format) => {
    (format as ResponsesReplyFormat).answer({
      choices: [{ message: { role: 'assistant', content: 'New answer.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 9, completion_tokens: 2 },
    });
    return Promise.resolve('completed');
  });
  admission.run.mockImplementation((_principal, _request, _reply, relay) => relay({} as never));
  const service = new ResponsesService(admission, chat, stored);
  const admittedBody = () => admission.run.mock.calls[0][1].body as { messages: unknown[] };
  return { service, admission, stored, admittedBody };
}

describe(ResponsesService.name, () => {
  it('should admit the referred item as part of the prompt, so the hold and the bill count it', async () => {
    const { service, admittedBody } = setUp();
    const body = {
      model: 'm',
      input: [
        { role: 'user', content: 'Hi' },
        { type: 'item_reference', id: 'msg_1' },
      ],
    };

    await service.create(principal, { body, id: 'req_1' }, reply);

    expect(admittedBody().messages).toEqual([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Kept answer.' },
    ]);
  });

  it('should keep the answer it sent when the request leaves store unset, and not when it says store: false', async () => {
    const kept = setUp();
    const notKept = setUp();

    await kept.service.create(principal, { body: { model: 'm', input: 'Hi' }, id: 'req_1' }, reply);
    await notKept.service.create(principal, { body: { model: 'm', input: 'Hi', store: false }, id: 'req_2' }, reply);

    expect(kept.stored.keep).toHaveBeenCalledWith(
      'account-1',
      expect.objectContaining({ store: true, output: [expect.objectContaining({ type: 'message' })] }),
    );
    expect(notKept.stored.keep).not.toHaveBeenCalled();
  });

  it('should keep nothing where the deployment keeps no answers', async () => {
    const { service, stored } = setUp(false);

    await service.create(principal, { body: { model: 'm', input: 'Hi', store: true }, id: 'req_1' }, reply);

    expect(stored.keep).not.toHaveBeenCalled();
  });

  it('should not wait for the answer to be kept', async () => {
    const { service, stored } = setUp();
    stored.keep.mockReturnValue(new Promise(() => undefined));

    await expect(service.create(principal, { body: { model: 'm', input: 'Hi' }, id: 'req_1' }, reply)).resolves.toBe(
      'completed',
    );
  });
});
