import { AnthropicAdapter } from 'src/modules/relay/upstream/anthropic.adapter';
import { GeminiAdapter } from 'src/modules/relay/upstream/gemini.adapter';
import { OpenAiAdapter } from 'src/modules/relay/upstream/openai.adapter';
import { sanitizeUpstreamMessage, sanitizeUpstreamParam } from 'src/modules/relay/upstream/upstream-error-text';

describe(sanitizeUpstreamMessage.name, () => {
  const channelKey = 'upstream-secret-key-0123456789';

  it.each([
    ['the channel key', `Key ${channelKey} is not allowed`, channelKey],
    ['an sk- key', 'Incorrect API key provided: sk-proj-AbC123dEf456GhI789.', 'sk-proj-AbC123dEf456GhI789'],
    ['a masked key', 'Incorrect API key provided: upstr**********6789.', '6789'],
    ['an Anthropic key', 'bad key sk-ant-api03-abcdefgh12345678', 'sk-ant-api03'],
    ['a Google key', 'key AIzaSyA1234567890abcdefghijklmnopqrstu rejected', 'AIzaSy'],
    ['an organisation', 'Rate limit reached for org-a1B2c3D4e5F6 on tokens', 'org-a1B2c3D4e5F6'],
    ['a URL', 'See https://platform.example.com/account/billing?x=1 for details', 'platform.example.com'],
    ['a bare host', 'Request to api.openai.com failed', 'api.openai.com'],
    ['an IP and port', 'upstream 10.1.2.3:8443 refused', '10.1.2.3'],
    ['an e-mail', 'Contact billing@provider.example for help', 'billing@provider.example'],
  ])('should remove %s', (_what, message, secret) => {
    const sanitized = sanitizeUpstreamMessage(message, channelKey);
    expect(sanitized).not.toContain(secret);
    expect(sanitized.length).toBeGreaterThan(5);
  });

  it('should keep what was wrong with the request', () => {
    const message = "Invalid value for 'temperature': messages.0.content must be a string; max_tokens is 5000.";
    expect(sanitizeUpstreamMessage(message, channelKey)).toBe(message);
  });

  it('should keep a parameter path and drop free text', () => {
    expect(sanitizeUpstreamParam('messages[0].content')).toBe('messages[0].content');
    expect(sanitizeUpstreamParam('see https://x.example')).toBeNull();
  });
});

describe('errorDetails: errors that mean the channel cannot serve', () => {
  const openai = new OpenAiAdapter();
  const anthropic = new AnthropicAdapter();
  const gemini = new GeminiAdapter();
  const openaiError = (code: string, type = 'invalid_request_error') => ({ error: { message: 'x', type, code } });

  it.each(['insufficient_quota', 'billing_not_active', 'invalid_api_key', 'account_deactivated', 'access_terminated'])(
    'should fail over on OpenAI code %s',
    (code) => expect(openai.errorDetails(openaiError(code))?.channelCannotServe).toBe(true),
  );

  it('should fail over on OpenAI type insufficient_quota and on a quota message of a compatible upstream', () => {
    expect(openai.errorDetails(openaiError('', 'insufficient_quota'))?.channelCannotServe).toBe(true);
    const reseller = { error: { message: 'Insufficient balance, please recharge', type: 'error', code: null } };
    expect(openai.errorDetails(reseller)?.channelCannotServe).toBe(true);
  });

  it.each(['authentication_error', 'permission_error', 'billing_error'])(
    'should fail over on Anthropic type %s',
    (type) =>
      expect(anthropic.errorDetails({ type: 'error', error: { type, message: 'x' } })?.channelCannotServe).toBe(true),
  );

  it('should fail over on Anthropic credit balance too low', () => {
    const error = {
      type: 'invalid_request_error',
      message: 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing.',
    };
    expect(anthropic.errorDetails({ type: 'error', error })?.channelCannotServe).toBe(true);
  });

  it('should fail over on a Gemini API_KEY_INVALID and a billing precondition', () => {
    const invalidKey = {
      error: {
        code: 400,
        message: 'API key not valid. Please pass a valid API key.',
        status: 'INVALID_ARGUMENT',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }],
      },
    };
    const billing = { error: { code: 400, message: 'Please enable billing.', status: 'FAILED_PRECONDITION' } };
    expect(gemini.errorDetails(invalidKey)?.channelCannotServe).toBe(true);
    expect(gemini.errorDetails(billing)?.channelCannotServe).toBe(true);
  });

  it('should not fail over on a request error', () => {
    const bad = { error: { message: "Invalid 'temperature'", type: 'invalid_request_error', code: null } };
    expect(openai.errorDetails(bad)?.channelCannotServe).toBe(false);
    const anthropicBad = { type: 'error', error: { type: 'invalid_request_error', message: 'messages: empty' } };
    expect(anthropic.errorDetails(anthropicBad)?.channelCannotServe).toBe(false);
    const geminiBad = { error: { code: 400, message: 'Invalid JSON payload', status: 'INVALID_ARGUMENT' } };
    expect(gemini.errorDetails(geminiBad)?.channelCannotServe).toBe(false);
  });
});
