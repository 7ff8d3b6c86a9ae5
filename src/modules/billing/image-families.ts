import { ChannelType } from 'src/modules/channels/channel.entity';

/*
 * What one image in a prompt can cost, by the published formula of the upstream model behind a route.
 * Providers bill images very differently: gpt-4o-mini charges 2,833 tokens for a detail:low image that
 * gpt-4o bills at 85 (its token price is lower by as much), patch-based models ignore `detail`. A hold
 * must never be below the bill, and settlement charges at most what is left, so:
 * - a model is held at the largest formula over all its routes (any of them may serve the request);
 * - an upstream model we do not recognise is held at the largest of all known formulas for that image;
 * - an image of unknown size (an http URL, an unreadable header) is held at its formula's worst case.
 * Names match exactly, with an optional date suffix ('gpt-4o-2024-08-06'), so a new variant
 * ('gpt-4o-audio-preview') falls to the worst case instead of inheriting a cheaper formula.
 */
export interface ImageSize {
  width: number;
  height: number;
}

/** Tokens of one image: `size` null when unknown, `low` for `detail: 'low'`. */
type ImageFormula = (size: ImageSize | null, low: boolean) => number;

// OpenAI tiles: scaled to fit 2048×2048, then its short side to at most 768; base + tile × 512-px tiles.
// detail:low is the base alone. At most 4 × 2 tiles after scaling.
const OPENAI_TILES = { fit: 2048, shortSide: 768, tile: 512, maxTiles: 8 };
const TILE_PRICES = {
  'gpt-4o': { base: 85, tile: 170 },
  'gpt-4o-mini': { base: 2833, tile: 5667 },
};

// OpenAI patches: 32-px patches, scaled down to at most 1536 of them, times the model's multiplier.
const PATCH = 32;
const MAX_PATCHES = 1536;
const PATCH_MULTIPLIERS = { 'gpt-4.1-mini': 1.62, 'gpt-4.1-nano': 2.46, 'o4-mini': 1.72 };

// Anthropic: width × height / 750 once the long side is scaled to at most 1568 px; images over about
// 1,600 tokens are scaled down to it.
const ANTHROPIC = { longSide: 1568, pixelsPerToken: 750, maxTokens: 1600 };

// Gemini (1.5 – 2.5): 258 tokens for an image of at most 384 px on both sides, otherwise 258 per 768-px
// tile; larger images are scaled to fit 3072×3072 (4 × 4 tiles at most).
const GEMINI = { small: 384, tile: 768, tileTokens: 258, fit: 3072 };

const OPENAI_MODELS: Record<string, keyof typeof FORMULAS> = {
  'gpt-4o': 'gpt-4o',
  'gpt-4.1': 'gpt-4o',
  'gpt-4o-mini': 'gpt-4o-mini',
  'gpt-4.1-mini': 'gpt-4.1-mini',
  'gpt-4.1-nano': 'gpt-4.1-nano',
  'o4-mini': 'o4-mini',
};
const DATE_SUFFIX = /-\d{4}-\d{2}-\d{2}$/;
const ANTHROPIC_MODEL = /^claude-/;
const GEMINI_MODEL = /^gemini-(1\.5|2\.0|2\.5)-/;

export function tiledImageTokens(size: ImageSize | null, low: boolean, price: { base: number; tile: number }): number {
  if (low) {
    return price.base;
  }
  if (!size) {
    return price.base + price.tile * OPENAI_TILES.maxTiles;
  }
  const { width, height } = size;
  const fit = Math.min(1, OPENAI_TILES.fit / Math.max(width, height));
  const scale = fit * Math.min(1, OPENAI_TILES.shortSide / (Math.min(width, height) * fit));
  // Sides rounded up, so no rounding of the provider's can make a tile we did not count.
  const tiles =
    Math.ceil(Math.ceil(width * scale) / OPENAI_TILES.tile) * Math.ceil(Math.ceil(height * scale) / OPENAI_TILES.tile);
  return price.base + price.tile * Math.min(tiles, OPENAI_TILES.maxTiles);
}

export function patchImageTokens(size: ImageSize | null, multiplier: number): number {
  const patches = size ? Math.ceil(size.width / PATCH) * Math.ceil(size.height / PATCH) : MAX_PATCHES;
  return Math.ceil(Math.min(patches, MAX_PATCHES) * multiplier);
}

export function anthropicImageTokens(size: ImageSize | null): number {
  if (!size) {
    return ANTHROPIC.maxTokens;
  }
  const scale = Math.min(1, ANTHROPIC.longSide / Math.max(size.width, size.height));
  const pixels = Math.ceil(size.width * scale) * Math.ceil(size.height * scale);
  return Math.min(Math.ceil(pixels / ANTHROPIC.pixelsPerToken), ANTHROPIC.maxTokens);
}

export function geminiImageTokens(size: ImageSize | null): number {
  if (size && size.width <= GEMINI.small && size.height <= GEMINI.small) {
    return GEMINI.tileTokens;
  }
  const { width, height } = size ?? { width: GEMINI.fit, height: GEMINI.fit };
  const scale = Math.min(1, GEMINI.fit / Math.max(width, height));
  const tiles = Math.ceil(Math.ceil(width * scale) / GEMINI.tile) * Math.ceil(Math.ceil(height * scale) / GEMINI.tile);
  return GEMINI.tileTokens * tiles;
}

const FORMULAS = {
  'gpt-4o': (size, low) => tiledImageTokens(size, low, TILE_PRICES['gpt-4o']),
  'gpt-4o-mini': (size, low) => tiledImageTokens(size, low, TILE_PRICES['gpt-4o-mini']),
  'gpt-4.1-mini': (size) => patchImageTokens(size, PATCH_MULTIPLIERS['gpt-4.1-mini']),
  'gpt-4.1-nano': (size) => patchImageTokens(size, PATCH_MULTIPLIERS['gpt-4.1-nano']),
  'o4-mini': (size) => patchImageTokens(size, PATCH_MULTIPLIERS['o4-mini']),
  anthropic: (size) => anthropicImageTokens(size),
  gemini: (size) => geminiImageTokens(size),
} satisfies Record<string, ImageFormula>;

export type ImageFamily = keyof typeof FORMULAS;
/** Every known formula: what an unrecognised upstream model is held at. */
export const ALL_IMAGE_FAMILIES = Object.keys(FORMULAS) as ImageFamily[];

/** The image formula of one upstream model, or null when we do not know it. */
export function imageFamilyOf(channelType: ChannelType, upstreamModel: string): ImageFamily | null {
  const name = upstreamModel.toLowerCase();
  switch (channelType) {
    case 'openai':
      return OPENAI_MODELS[name.replace(DATE_SUFFIX, '')] ?? null;
    case 'anthropic':
      return ANTHROPIC_MODEL.test(name) ? 'anthropic' : null;
    case 'gemini':
      return GEMINI_MODEL.test(name) ? 'gemini' : null;
    default:
      return null;
  }
}

type RouteModels = readonly { channel: { type: ChannelType }; upstreamModel: string }[];

// The catalog builds a model's routes once per reload, so the answer is kept per routes array and
// the completion path does not match model names on every request.
const familiesByRoutes = new WeakMap<RouteModels, ImageFamily[]>();

/** The formulas an image for this model is held at: one per route, all of them when one is unknown. */
export function imageFamiliesOf(routes: RouteModels): ImageFamily[] {
  let families = familiesByRoutes.get(routes);
  if (!families) {
    families = familiesOfRoutes(routes);
    familiesByRoutes.set(routes, families);
  }
  return families;
}

function familiesOfRoutes(routes: RouteModels): ImageFamily[] {
  const families = new Set<ImageFamily>();
  for (const route of routes) {
    const family = imageFamilyOf(route.channel.type, route.upstreamModel);
    if (!family) {
      return ALL_IMAGE_FAMILIES;
    }
    families.add(family);
  }
  return families.size > 0 ? [...families] : ALL_IMAGE_FAMILIES;
}

/** The most any of these formulas bills for one image. */
export function maxImageTokens(families: readonly ImageFamily[], size: ImageSize | null, low: boolean): number {
  let tokens = 0;
  for (const family of families) {
    tokens = Math.max(tokens, FORMULAS[family](size, low));
  }
  return tokens;
}
