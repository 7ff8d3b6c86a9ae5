import { ApiError } from 'src/common/errors/api-error';
import { CatalogModel } from 'src/modules/models/catalog.service';
import { anthropicCountBody, checkCountRequest, ownInputTokens } from 'src/modules/messages/message-token-count';

const model: CatalogModel = {
  id: 'gateway-claude',
  inputPrice: 1_000n,
  outputPrice: 2_000n,
  maxOutputTokens: 4096,
  vision: false,
  kind: 'chat',
  rpm: 60,
  tpm: 10_000,
  created: 0,
  ownedBy: 'anthropic',
  routes: [],
};
const findModel = (id: string) => (id === model.id ? model : undefined);
const messages = [{ role: 'user', content: 'Count me, please' }];
const tool = { name: 'read_file', description: 'Reads a file', input_schema: { type: 'object', properties: {} } };

describe('checkCountRequest', () => {
  it('should take a message body without max_tokens, and find its model', () => {
    const counted = checkCountRequest({ model: model.id, system: 'Be brief.', messages }, findModel);

    expect(counted.model).toBe(model);
    expect(counted.chatBody.messages).toEqual([{ role: 'system', content: 'Be brief.' }, ...messages]);
  });

  it('should refuse what /v1/messages refuses, naming the field', () => {
    const refusal = (body: unknown) => {
      try {
        checkCountRequest(body, findModel);
      } catch (error) {
        return error instanceof ApiError ? error.param : error;
      }
      return 'accepted';
    };

    expect(refusal([])).toBeNull();
    expect(refusal({ messages })).toBe('model');
    expect(refusal({ model: model.id })).toBe('messages');
    expect(refusal({ model: 'unknown', messages })).toBe('model');
    expect(refusal({ model: model.id, messages, n: 2 })).toBe('n');
  });
});

describe('anthropicCountBody', () => {
  it("should send the route's model and leave out the fields only a generation reads", () => {
    const body = {
      model: model.id,
      messages,
      system: 'Be brief.',
      tools: [tool],
      thinking: { type: 'enabled', budget_tokens: 2048 },
      max_tokens: 100,
      stream: true,
      temperature: 0.5,
      top_p: 1,
      top_k: 5,
      stop_sequences: ['END'],
      metadata: { user_id: 'u' },
    };

    expect(anthropicCountBody(body, 'claude-upstream')).toEqual({
      model: 'claude-upstream',
      messages,
      system: 'Be brief.',
      tools: [tool],
      thinking: { type: 'enabled', budget_tokens: 2048 },
    });
    expect(body.model).toBe(model.id);
  });
});

describe('ownInputTokens', () => {
  const count = (body: Record<string, unknown>) => ownInputTokens(checkCountRequest(body, findModel));

  it('should count the system text, the tools and the thinking of earlier turns', () => {
    const bare = count({ model: model.id, messages });
    const thought = [
      ...messages,
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'Let me think this through.', signature: 's' }] },
      { role: 'user', content: 'And now?' },
    ];

    expect(count({ model: model.id, system: 'Be brief.', messages })).toBeGreaterThan(bare);
    expect(count({ model: model.id, messages, tools: [tool] })).toBeGreaterThan(bare);
    expect(count({ model: model.id, messages: thought })).toBeGreaterThan(
      count({ model: model.id, messages: [...messages, { role: 'assistant', content: [] }, thought[2]] }),
    );
  });
});
