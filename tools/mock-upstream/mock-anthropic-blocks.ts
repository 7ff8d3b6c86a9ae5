import { ServerResponse } from 'node:http';
import { mockArgumentPieces, mockValueFor } from 'tools/mock-upstream/mock-upstream.server';

/**
 * The mock's Anthropic answers with more than one text block: extended thinking (`thinking` blocks
 * with a signature), tool use (`tool_use` blocks, streamed as `input_json_delta`) and structured
 * output (`output_config.format`). Faithful to the published Messages API: its event and field
 * names, `toolu_` ids, `stop_reason: tool_use`, and its 400s for requests it refuses (thinking beside
 * a forced tool, a budget that does not fit `max_tokens`, a tool_result that answers no tool_use).
 *
 * Deterministic: `tool_choice` any calls every tool (only the first with disable_parallel_tool_use),
 * a named tool is called alone, each with a value fitting its schema (mockValueFor); auto and none
 * answer the reply text. Thinking is THINKING_TEXT, one token per word, counted in output_tokens
 * and, with the `reasoning` of a `[mock-usage]` marker, in output_tokens_details.thinking_tokens.
 */
type Json = Record<string, unknown>;

export const THINKING_TEXT = 'The user wants a short answer, so I will keep it brief.';
const MIN_THINKING_BUDGET = 1024;

const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const wordPieces = (text: string) => text.match(/\s*\S+\s*/g) ?? [];

/** What the dialect has already worked out: the reply text, the input usage and extra thinking tokens. */
export interface BlockReplyInput {
  text: string;
  inputUsage: Json;
  extraThinkingTokens: number;
}

type Block =
  | { type: 'thinking'; pieces: string[]; signature: string }
  | { type: 'text'; pieces: string[] }
  | { type: 'tool_use'; id: string; name: string; pieces: string[] };

/** Whether the request needs more than the dialect's one text block. */
export function wantsAnthropicBlocks(body: Json): boolean {
  const choice = isRecord(body.tool_choice) ? body.tool_choice.type : undefined;
  return thinkingBudget(body) !== null || choice === 'any' || choice === 'tool' || isRecord(body.output_config);
}

const thinkingBudget = (body: Json): number | null =>
  isRecord(body.thinking) && body.thinking.type === 'enabled' ? Number(body.thinking.budget_tokens) : null;

/** What Anthropic answers 400 (invalid_request_error) to, among what this mock models; null when valid. */
export function anthropicRefusal(body: Json): string | null {
  const budget = thinkingBudget(body);
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const choice = isRecord(body.tool_choice) ? body.tool_choice : null;
  if (choice && tools.length === 0) {
    return 'tool_choice: tool_choice may only be specified while providing tools.';
  }
  if (choice?.type === 'tool' && !tools.some((tool) => isRecord(tool) && tool.name === choice.name)) {
    return `tool_choice.name: Tool '${String(choice.name)}' not found in provided tools.`;
  }
  if (budget !== null) {
    if (!Number.isInteger(budget) || budget < MIN_THINKING_BUDGET) {
      return `thinking.enabled.budget_tokens: Input should be greater than or equal to ${MIN_THINKING_BUDGET}`;
    }
    if (typeof body.max_tokens !== 'number' || body.max_tokens <= budget) {
      return '`max_tokens` must be greater than `thinking.budget_tokens`.';
    }
    if (body.temperature !== undefined && body.temperature !== 1) {
      return '`temperature` may only be set to 1 when thinking is enabled.';
    }
    if (typeof body.top_p === 'number' && body.top_p < 0.95) {
      return '`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled.';
    }
    if (choice?.type === 'any' || choice?.type === 'tool') {
      return 'Thinking may not be enabled when tool_choice forces tool use.';
    }
  }
  return unansweredToolResult(body.messages);
}

/** Every tool_result must answer a tool_use of the assistant turn just before it, and come first. */
function unansweredToolResult(messages: unknown): string | null {
  const turns = Array.isArray(messages) ? messages.filter(isRecord) : [];
  for (const [i, turn] of turns.entries()) {
    const blocks = Array.isArray(turn.content) ? turn.content.filter(isRecord) : [];
    const results = blocks.filter((block) => block.type === 'tool_result');
    if (results.length === 0) {
      continue;
    }
    if (blocks.slice(0, results.length).some((block) => block.type !== 'tool_result')) {
      return `messages.${i}: tool_result blocks must come first in the user message.`;
    }
    const previous = turns[i - 1];
    const asked = new Set(
      (previous?.role === 'assistant' && Array.isArray(previous.content) ? previous.content : [])
        .filter((block): block is Json => isRecord(block) && block.type === 'tool_use')
        .map((block) => block.id),
    );
    const stray = results.find((block) => !asked.has(block.tool_use_id));
    if (stray) {
      return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(stray.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
  }
  return null;
}

function blocksFor(body: Json, reply: BlockReplyInput, sequence: number): Block[] {
  const blocks: Block[] = [];
  if (thinkingBudget(body) !== null) {
    blocks.push({ type: 'thinking', pieces: wordPieces(THINKING_TEXT), signature: `mock-signature-${sequence}` });
  }
  const tools = (Array.isArray(body.tools) ? body.tools : []).filter(isRecord);
  const choice = isRecord(body.tool_choice) ? body.tool_choice : {};
  const called =
    choice.type === 'tool'
      ? tools.filter((tool) => tool.name === choice.name)
      : choice.type === 'any'
        ? tools.slice(0, choice.disable_parallel_tool_use === true ? 1 : tools.length)
        : [];
  called.forEach((tool, i) => {
    const input = JSON.stringify(mockValueFor(tool.input_schema));
    blocks.push({
      type: 'tool_use',
      id: `toolu_mock_${sequence}_${i}`,
      name: String(tool.name),
      pieces: mockArgumentPieces(input),
    });
  });
  if (called.length === 0) {
    const format =
      isRecord(body.output_config) && isRecord(body.output_config.format) ? body.output_config.format : null;
    const text = format ? JSON.stringify(mockValueFor(format.schema)) : reply.text;
    blocks.push({ type: 'text', pieces: format ? mockArgumentPieces(text) : wordPieces(text) });
  }
  return blocks;
}

/** The blocks cut at max_tokens (one token per piece), and whether they were. */
function truncate(blocks: Block[], maxTokens: number): { blocks: Block[]; truncated: boolean } {
  let left = maxTokens;
  const kept: Block[] = [];
  for (const block of blocks) {
    if (left <= 0) {
      return { blocks: kept, truncated: true };
    }
    kept.push({ ...block, pieces: block.pieces.slice(0, left) });
    left -= block.pieces.length;
  }
  return { blocks: kept, truncated: left < 0 };
}

interface Answer {
  id: string;
  blocks: Block[];
  stopReason: 'end_turn' | 'max_tokens' | 'tool_use';
  usage: Json;
  outputUsage: Json;
}

function answerFor(body: Json, reply: BlockReplyInput, sequence: number): Answer {
  const all = blocksFor(body, reply, sequence);
  const { blocks, truncated } = truncate(all, typeof body.max_tokens === 'number' ? body.max_tokens : Infinity);
  const thinking = blocks.filter((block) => block.type === 'thinking').reduce((n, b) => n + b.pieces.length, 0);
  // As in the dialect's text answers, a marker's reasoning tokens are billed whether or not thinking shows.
  const extra = reply.extraThinkingTokens;
  const thinkingTokens = thinking + extra;
  const outputTokens = blocks.reduce((n, block) => n + block.pieces.length, 0) + extra;
  const outputUsage: Json = {
    output_tokens: outputTokens,
    ...(thinkingBudget(body) === null ? {} : { output_tokens_details: { thinking_tokens: thinkingTokens } }),
  };
  const usesTool = blocks.some((block) => block.type === 'tool_use');
  return {
    id: `msg_mock_${sequence}`,
    blocks,
    stopReason: truncated ? 'max_tokens' : usesTool ? 'tool_use' : 'end_turn',
    usage: { ...reply.inputUsage, ...outputUsage },
    outputUsage,
  };
}

function finalBlock(block: Block): Json {
  const joined = block.pieces.join('');
  switch (block.type) {
    case 'thinking':
      return { type: 'thinking', thinking: joined, signature: block.signature };
    case 'text':
      return { type: 'text', text: joined };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: parsedInput(joined) };
  }
}

/** A tool input cut by max_tokens is not JSON: Anthropic then gives what it parsed, here nothing. */
function parsedInput(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return {};
  }
}

function startBlock(block: Block): Json {
  switch (block.type) {
    case 'thinking':
      return { type: 'thinking', thinking: '', signature: '' };
    case 'text':
      return { type: 'text', text: '' };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: {} };
  }
}

function deltas(block: Block): Json[] {
  switch (block.type) {
    case 'thinking':
      return [
        ...block.pieces.map((thinking) => ({ type: 'thinking_delta', thinking })),
        { type: 'signature_delta', signature: block.signature },
      ];
    case 'text':
      return block.pieces.map((text) => ({ type: 'text_delta', text }));
    case 'tool_use':
      return ['', ...block.pieces].map((partial_json) => ({ type: 'input_json_delta', partial_json }));
  }
}

/** Answers a request that wants blocks (wantsAnthropicBlocks), as JSON or as a named event stream. */
export function respondAnthropicBlocks(
  res: ServerResponse,
  body: Json,
  reply: BlockReplyInput,
  sequence: number,
): void {
  const refusal = anthropicRefusal(body);
  if (refusal) {
    const error = { type: 'error', error: { type: 'invalid_request_error', message: refusal } };
    res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(error));
    return;
  }
  const answer = answerFor(body, reply, sequence);
  const message = { id: answer.id, type: 'message', role: 'assistant', model: body.model };
  if (body.stream !== true) {
    const full = {
      ...message,
      content: answer.blocks.map(finalBlock),
      stop_reason: answer.stopReason,
      stop_sequence: null,
      usage: answer.usage,
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(full));
    return;
  }
  const event = (type: string, data: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const start = { ...message, content: [], stop_reason: null, stop_sequence: null };
  res.write(event('message_start', { message: { ...start, usage: { ...reply.inputUsage, output_tokens: 1 } } }));
  res.write(event('ping', {}));
  answer.blocks.forEach((block, index) => {
    res.write(event('content_block_start', { index, content_block: startBlock(block) }));
    for (const delta of deltas(block)) {
      res.write(event('content_block_delta', { index, delta }));
    }
    res.write(event('content_block_stop', { index }));
  });
  const stop = { stop_reason: answer.stopReason, stop_sequence: null };
  res.write(event('message_delta', { delta: stop, usage: answer.outputUsage }));
  res.end(event('message_stop', {}));
}
