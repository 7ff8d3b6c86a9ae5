import { countCompletionTokens, estimatePromptTokens } from 'src/modules/billing/token-estimator';

describe('token estimation', () => {
  it('should estimate a prompt at or above its real token count', () => {
    const text = 'Hello, how are you doing today? Please tell me a story about dragons.';
    const estimate = estimatePromptTokens([{ role: 'user', content: text }]);
    expect(estimate).toBeGreaterThanOrEqual(countCompletionTokens(text) + 7);
    expect(estimate).toBeLessThan(40);
  });

  it('should count text parts and reserve generously for images', () => {
    const withImage = estimatePromptTokens([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'https://x' } },
        ],
      },
    ]);
    expect(withImage).toBeGreaterThan(1_500);
  });

  it('should count delivered completion text', () => {
    expect(countCompletionTokens('')).toBe(0);
    expect(countCompletionTokens('Hello from the mock upstream.')).toBeGreaterThan(3);
  });
});
