import { ApiError } from 'src/common/errors/api-error';
import {
  checkMessageContent,
  JSON_OBJECT_INSTRUCTION,
  outputFormatOf,
  refuseUnsupported,
  thinkingOf,
  toolChoiceOf,
} from 'src/modules/relay/upstream/anthropic-request-rules';

/** The `param` of the 400 that `run` throws, or null when it throws nothing. */
function refusedParam(run: () => unknown): string | null {
  try {
    run();
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    return (error as ApiError).param;
  }
}

describe('anthropic request rules', () => {
  describe(refuseUnsupported.name, () => {
    it.each([
      [{ logprobs: true }, 'logprobs'],
      [{ top_logprobs: 2 }, 'top_logprobs'],
      [{ presence_penalty: 0.5 }, 'presence_penalty'],
      [{ frequency_penalty: -1 }, 'frequency_penalty'],
      [{ logit_bias: { '50256': -100 } }, 'logit_bias'],
      [{ audio: { voice: 'alloy', format: 'mp3' } }, 'audio'],
      [{ modalities: ['text', 'audio'] }, 'modalities'],
      [{ functions: [{ name: 'f' }] }, 'functions'],
      [{ function_call: 'auto' }, 'function_call'],
      [{ web_search_options: {} }, 'web_search_options'],
      [{ tools: [{ type: 'custom', custom: { name: 'grammar' } }] }, 'tools'],
    ])('should refuse %j naming %s', (body, param) => {
      expect(refusedParam(() => refuseUnsupported(body))).toBe(param);
    });

    it('should let through what changes nothing the client gets: defaults, seed, prediction, store', () => {
      const body = {
        logprobs: false,
        presence_penalty: 0,
        frequency_penalty: 0,
        logit_bias: {},
        modalities: ['text'],
        seed: 7,
        prediction: { type: 'content', content: 'x' },
        store: true,
        tools: [{ type: 'function', function: { name: 'f' } }],
      };
      expect(refusedParam(() => refuseUnsupported(body))).toBeNull();
    });
  });

  describe(checkMessageContent.name, () => {
    const withPart = (part: unknown) => [{ role: 'user', content: [{ type: 'text', text: 'hi' }, part] }];

    it('should take https URLs and data URIs of the image types Claude reads', () => {
      for (const url of ['https://example.com/cat.png', 'data:image/webp;base64,AAAA']) {
        expect(refusedParam(() => checkMessageContent(withPart({ type: 'image_url', image_url: { url } })))).toBeNull();
      }
    });

    it.each([['http://example.com/cat.png'], ['data:image/bmp;base64,AAAA']])(
      'should refuse the image %s naming messages',
      (url) => {
        expect(refusedParam(() => checkMessageContent(withPart({ type: 'image_url', image_url: { url } })))).toBe(
          'messages',
        );
      },
    );

    it('should refuse audio and file parts, which the translation cannot carry, naming messages', () => {
      const audio = { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } };
      expect(refusedParam(() => checkMessageContent(withPart(audio)))).toBe('messages');
      expect(refusedParam(() => checkMessageContent(withPart({ type: 'file', file: { file_id: 'f' } })))).toBe(
        'messages',
      );
    });
  });

  describe(thinkingOf.name, () => {
    it('should map each effort to its documented budget, and none or absent to no thinking', () => {
      expect(thinkingOf({ reasoning_effort: 'minimal' }, 8192)).toEqual({ type: 'enabled', budget_tokens: 1024 });
      expect(thinkingOf({ reasoning_effort: 'low' }, 8192)).toEqual({ type: 'enabled', budget_tokens: 1024 });
      expect(thinkingOf({ reasoning_effort: 'medium' }, 8192)).toEqual({ type: 'enabled', budget_tokens: 2048 });
      expect(thinkingOf({ reasoning_effort: 'high' }, 8192)).toEqual({ type: 'enabled', budget_tokens: 4096 });
      expect(thinkingOf({ reasoning_effort: 'none' }, 8192)).toBeNull();
      expect(thinkingOf({}, 8192)).toBeNull();
    });

    it('should refuse an unknown effort, and a budget that max_tokens (which the hold covers) cannot fit', () => {
      expect(refusedParam(() => thinkingOf({ reasoning_effort: 'extreme' }, 8192))).toBe('reasoning_effort');
      expect(refusedParam(() => thinkingOf({ reasoning_effort: 'high' }, 4096))).toBe('reasoning_effort');
      expect(thinkingOf({ reasoning_effort: 'high' }, 4097)).toEqual({ type: 'enabled', budget_tokens: 4096 });
    });

    it('should refuse what Anthropic refuses beside thinking, naming it: temperature, low top_p, forced tools', () => {
      const effort = { reasoning_effort: 'low' };
      expect(refusedParam(() => thinkingOf({ ...effort, temperature: 0.2 }, 8192))).toBe('temperature');
      expect(refusedParam(() => thinkingOf({ ...effort, top_p: 0.5 }, 8192))).toBe('top_p');
      expect(refusedParam(() => thinkingOf({ ...effort, tool_choice: 'required' }, 8192))).toBe('tool_choice');
      const named = { type: 'function', function: { name: 'f' } };
      expect(refusedParam(() => thinkingOf({ ...effort, tool_choice: named }, 8192))).toBe('tool_choice');
      expect(
        refusedParam(() => thinkingOf({ ...effort, temperature: 1, top_p: 0.95, tool_choice: 'auto' }, 8192)),
      ).toBe(null);
    });
  });

  describe(outputFormatOf.name, () => {
    it('should send a json_schema as structured output and ask for a json_object in the system prompt', () => {
      const schema = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false };
      expect(outputFormatOf({ response_format: { type: 'json_schema', json_schema: { name: 'a', schema } } })).toEqual({
        format: { type: 'json_schema', schema },
      });
      expect(outputFormatOf({ response_format: { type: 'json_object' } })).toEqual({
        instruction: JSON_OBJECT_INSTRUCTION,
      });
      expect(outputFormatOf({ response_format: { type: 'text' } })).toBeNull();
      expect(outputFormatOf({})).toBeNull();
    });

    it('should refuse a json_schema without a schema, or an unknown type, naming response_format', () => {
      expect(refusedParam(() => outputFormatOf({ response_format: { type: 'json_schema', json_schema: {} } }))).toBe(
        'response_format',
      );
      expect(refusedParam(() => outputFormatOf({ response_format: { type: 'yaml' } }))).toBe('response_format');
    });
  });

  describe(toolChoiceOf.name, () => {
    it('should map auto, none, required and a named function, and parallel_tool_calls false', () => {
      expect(toolChoiceOf({})).toEqual({ type: 'auto' });
      expect(toolChoiceOf({ tool_choice: 'auto' })).toEqual({ type: 'auto' });
      expect(toolChoiceOf({ tool_choice: 'none' })).toEqual({ type: 'none' });
      expect(toolChoiceOf({ tool_choice: 'required' })).toEqual({ type: 'any' });
      expect(toolChoiceOf({ tool_choice: { type: 'function', function: { name: 'get_weather' } } })).toEqual({
        type: 'tool',
        name: 'get_weather',
      });
      expect(toolChoiceOf({ tool_choice: 'required', parallel_tool_calls: false })).toEqual({
        type: 'any',
        disable_parallel_tool_use: true,
      });
      expect(toolChoiceOf({ tool_choice: 'none', parallel_tool_calls: false })).toEqual({ type: 'none' });
    });
  });
});
