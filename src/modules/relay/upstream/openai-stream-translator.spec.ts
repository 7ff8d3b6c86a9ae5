import { OpenAiStreamTranslator } from 'src/modules/relay/upstream/openai.adapter';

const usage = { promptTokens: 12, completionTokens: 3 };
const chunk = (fields: Record<string, unknown>) =>
  `data: ${JSON.stringify({ object: 'chat.completion.chunk', model: 'upstream-model', ...fields })}`;

describe(OpenAiStreamTranslator.name, () => {
  it('relays chunks with our model id and gives the usage chunk it adds the stream’s id and time', () => {
    const translator = new OpenAiStreamTranslator('upstream-model', 'our-model', true);

    const first = translator.translate(chunk({ id: 'chatcmpl-1', created: 1_700_000_000, choices: [] }));
    translator.translate(chunk({ id: 'chatcmpl-1', created: 1_700_000_001, choices: [{ delta: { content: 'Hi' } }] }));
    translator.translate('data: [DONE]');

    expect(first[0]).toContain('"model":"our-model"');
    expect(translator.finished()).toBe(true);
    const added = JSON.parse(translator.usageEvent(usage).slice('data: '.length)) as Record<string, unknown>;
    expect(added).toMatchObject({ id: 'chatcmpl-1', created: 1_700_000_000, model: 'our-model', choices: [] });
    expect(added.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
  });

  it('takes the id of a first chunk too long to keep, as of a short one', () => {
    const translator = new OpenAiStreamTranslator('upstream-model', 'our-model', true);
    const long = 'x'.repeat(100_000);

    translator.translate(
      chunk({ id: 'chatcmpl-long', created: 1_700_000_002, choices: [{ delta: { content: long } }] }),
    );
    translator.translate(chunk({ id: 'chatcmpl-other', created: 1_700_000_003, choices: [] }));

    const added = JSON.parse(translator.usageEvent(usage).slice('data: '.length)) as Record<string, unknown>;
    expect(added).toMatchObject({ id: 'chatcmpl-long', created: 1_700_000_002 });
  });

  it('dates the usage chunk now when the stream had no data chunk to take an id from', () => {
    const translator = new OpenAiStreamTranslator('upstream-model', 'our-model', true);
    translator.translate(': keep-alive');

    const before = Math.floor(Date.now() / 1000);
    const added = JSON.parse(translator.usageEvent(usage).slice('data: '.length)) as Record<string, unknown>;

    expect(added.id).toBeUndefined();
    expect(added.created).toBeGreaterThanOrEqual(before);
  });
});
