/*
 * Prose for prompt-size scenarios: ordinary words and spaces, sentences with commas and full stops,
 * paragraphs, and now and then a word outside ASCII — what a tokenizer and a JSON parser meet in real
 * prompts, unlike one letter repeated. Seeded, so every run and every target gets the same bytes.
 */

const WORDS = (
  'the of and to in is that it was for on are as with his they at be this from have or by one had not but ' +
  'what all were when we there can an your which their said if do will each about how up out them then she ' +
  'many some so these would other into has more her two like him see time could no make than first been its ' +
  'who now people my made over did down only way find use may water long little very after words called just ' +
  'where most know get through back much before go good new write our used me man too any day same right look ' +
  'think also around another came come work three word must because does part even place well such here take ' +
  'why things help put years different away again off went old number great tell men say small every found ' +
  'still between name should home big give air line set own under read last never us left end along while ' +
  'might next sound below saw something thought both few those always looked show large often together asked ' +
  'house world going want school important until form food keep children feet land side without boy once ' +
  'animals life enough took sometimes four head above kind began almost live page got earth need far hand high ' +
  'year mother light parts country father let night following picture being study second eyes soon times story'
).split(' ');
// Words from other scripts and with diacritics: a few percent of the text, as in a multilingual prompt.
const FOREIGN_WORDS = [
  'café',
  'naïve',
  'Zürich',
  'façade',
  'São Paulo',
  'Kraków',
  'smörgåsbord',
  '東京',
  'Москва',
  'Αθήνα',
];
const FOREIGN_SHARE = 0.03;
const DASH_SHARE = 0.02;
const COMMA_SHARE = 0.08;

/** Mulberry32: a tiny deterministic generator, good enough to vary word choice. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** As many whole sentences as fit in `maxBytes` UTF-8 bytes: within a sentence (~150 bytes) of it. */
export function seededProse(maxBytes: number, seed: number): string {
  const random = generator(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const sentence = (): string => {
    const length = 6 + Math.floor(random() * 15);
    const words: string[] = [];
    for (let index = 0; index < length; index++) {
      const roll = random();
      const word = roll < FOREIGN_SHARE ? pick(FOREIGN_WORDS) : pick(WORDS);
      const separator =
        index === length - 1 ? '' : roll > 1 - COMMA_SHARE ? ',' : roll > 1 - COMMA_SHARE - DASH_SHARE ? ' —' : '';
      words.push(word + separator);
    }
    const text = words.join(' ');
    return `${text[0].toUpperCase()}${text.slice(1)}${random() < 0.1 ? '?' : '.'}`;
  };
  let prose = '';
  let bytes = 0;
  let sentencesInParagraph = 0;
  for (;;) {
    const separator = prose === '' ? '' : sentencesInParagraph >= 4 && random() < 0.3 ? '\n\n' : ' ';
    sentencesInParagraph = separator === '\n\n' ? 0 : sentencesInParagraph + 1;
    const next = separator + sentence();
    const nextBytes = Buffer.byteLength(next);
    if (bytes + nextBytes > maxBytes) {
      return prose;
    }
    prose += next;
    bytes += nextBytes;
  }
}
