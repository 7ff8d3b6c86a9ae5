import { pngDataUri } from 'tools/bench/png-data-uri';
import { seededProse } from 'tools/bench/seeded-prose';

/** A user message larger than the plain scenarios' "Hello": prose of a given size, or one large image. */
export type PromptSpec = { id: string; proseBytes: number } | { id: string; imageSide: number };

/** The ~32 KB prose, which the slow streams also carry in a second set of runs (scenarios.ts). */
export const P32K_PROMPT: PromptSpec = { id: 'p32k', proseBytes: 32 * 1024 };

/**
 * What the gateway does per byte of prompt (parsing, validation, the token estimate, the relay) against
 * what a bare proxy does: prose of ~1 KB, ~32 KB and ~256 KB, and a ~1 MB PNG (512 × 512, stored
 * uncompressed) whose tokens the gateway estimates from its header. The id leads the scenario's name.
 */
export const PROMPTS: PromptSpec[] = [
  { id: 'p1k', proseBytes: 1024 },
  P32K_PROMPT,
  { id: 'p256k', proseBytes: 256 * 1024 },
  { id: 'img1m', imageSide: 512 },
];

const PLAIN_CONTENT = 'Hello';
const IMAGE_QUESTION = 'What is in this picture?';

type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

const built = new Map<string, string | ContentPart[]>();

/** The user message's content; built once per prompt, so every target gets the same bytes. */
export function userContent(prompt: PromptSpec | undefined): string | ContentPart[] {
  if (!prompt) {
    return PLAIN_CONTENT;
  }
  let content = built.get(prompt.id);
  if (content === undefined) {
    content =
      'proseBytes' in prompt
        ? seededProse(prompt.proseBytes, prompt.proseBytes)
        : [
            { type: 'text', text: IMAGE_QUESTION },
            { type: 'image_url', image_url: { url: pngDataUri(prompt.imageSide, prompt.imageSide) } },
          ];
    built.set(prompt.id, content);
  }
  return content;
}
