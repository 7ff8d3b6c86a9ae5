import { lazy } from 'src/common/lazy';
import { rawJsonOf } from 'src/common/http/json-body';
import { imageFamiliesOf } from 'src/modules/billing/image-families';
import { HeldTokens } from 'src/modules/billing/metering.types';
import { estimateRequest } from 'src/modules/billing/token-estimator';
import { Admitted, RequestValidator, ValidatedRequest } from 'src/modules/relay/admission/completion-admission.service';
import {
  ChatRequest,
  outputTokenCap,
  validateChatRequest,
} from 'src/modules/relay/chat-request/chat-request.validator';

/** Chat completions' view of an admitted request. */
export interface ChatAdmission extends ValidatedRequest {
  chat: ChatRequest;
}

/** A chat completion let through. */
export type AdmittedCompletion = Admitted<ChatAdmission>;

/**
 * The validation step of a chat-shaped body: chat completions' own, and that of the surfaces whose
 * request is translated to one (responses, messages) before admission.
 */
export const admitChatRequest: RequestValidator<ChatAdmission> = (body, findModel, bodyLater) => {
  const chat = validateChatRequest(body, findModel);
  return { chat, model: chat.model, held: heldTokens(body as Record<string, unknown>, chat, bodyLater) };
};

/**
 * The most the upstream can bill: every billable field of the body, and the output cap over all
 * choices. A long prompt's text past the exact budget counts as its bytes at first; the one-pass
 * bound's closer count is made only if that is refused, or billed (HeldTokens.closer).
 */
function heldTokens(
  body: Record<string, unknown>,
  chat: ChatRequest,
  bodyLater: () => Record<string, unknown>,
): HeldTokens {
  const quick = chatHeldTokens(body, chat, true);
  if (quick.rough) {
    quick.held.closer = lazy(() => chatHeldTokens(bodyLater(), chat, false).held);
  }
  return quick.held;
}

function chatHeldTokens(body: Record<string, unknown>, chat: ChatRequest, restAsBytes: boolean) {
  const { promptTokens, predictionTokens, rough } = estimateRequest(body, {
    audioReferenceTokens: chat.model.maxOutputTokens,
    imageFamilies: imageFamiliesOf(chat.model.routes),
    restAsBytes,
    bodyBytes: rawJsonOf(body)?.bytes.length,
  });
  // Rejected prediction tokens are billed as output, on top of max_tokens, for every choice.
  const held: HeldTokens = { promptTokens, completionTokens: outputTokenCap(chat) + predictionTokens * chat.n };
  return { held, rough };
}
