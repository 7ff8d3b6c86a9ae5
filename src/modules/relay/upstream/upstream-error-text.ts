/**
 * What an upstream's error message may say about itself that the customer must never see: its keys
 * (ours, exact or masked), its organisation, its addresses, its people. Each match becomes a
 * placeholder; the rest of the message (what was wrong with the request) reaches the client.
 */
const REDACTIONS: [RegExp, string][] = [
  [/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, '[url]'],
  [/[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g, '[email]'],
  // Secrets shown masked (`sk-abc***xyz`, `upstr****6789`): the visible ends are still part of a key.
  [/[\w.-]*\*{3,}[\w.*-]*/g, '[key]'],
  [/\b(?:sk|pk|rk|ak|key|api[_-]?key|token)[-_][\w-]{6,}/gi, '[key]'],
  [/\bAIza[\w-]{20,}/g, '[key]'],
  [/\borg-[\w-]{4,}/gi, '[organization]'],
  // Long random-looking tokens (letters and digits mixed): keys, tokens, ids of someone's account.
  [/\b(?=[\w-]*\d)(?=[\w-]*[a-z])[\w-]{24,}\b/gi, '[key]'],
  [/\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?(?:\/\S*)?/g, '[url]'],
  [/\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|ai|dev|cloud|app|co|cn|us|eu|internal|local)\b(?::\d+)?(?:\/\S*)?/gi, '[url]'],
  [/\blocalhost(?::\d+)?(?:\/\S*)?/gi, '[url]'],
];
const MAX_MESSAGE_CHARS = 1_000;
const PARAM = /^[\w.[\]-]{1,100}$/;

/** An upstream error message fit for the customer: the channel's key and anything key-, org-, URL- or e-mail-like removed. */
export function sanitizeUpstreamMessage(message: string, channelKey: string): string {
  let text = message.slice(0, MAX_MESSAGE_CHARS);
  if (channelKey.length >= 4) {
    text = text.split(channelKey).join('[key]');
  }
  for (const [pattern, placeholder] of REDACTIONS) {
    text = text.replace(pattern, placeholder);
  }
  return text;
}

/** An upstream's `param` only when it looks like a parameter path, never free text. */
export function sanitizeUpstreamParam(param: string | null): string | null {
  return param !== null && PARAM.test(param) ? param : null;
}

// Providers' words for "this account has no quota, no billing, or a bad key": the channel cannot serve,
// whatever the request; another route may.
const ACCOUNT_PROBLEM =
  /insufficient[_ ](?:quota|balance|credits?|funds)|exceeded your current quota|quota (?:exceeded|exhausted)|billing|credit balance|payment required|(?:invalid|incorrect)[_ ]api[_ ]?key|api[_ ]?key[_ ](?:not[_ ]valid|invalid|expired)|account[_ ](?:is[_ ])?(?:deactivated|suspended|disabled)|access[_ ]terminated/i;

/** Whether an error text (code, type or message) says the channel's account cannot serve. */
export function saysAccountCannotServe(...texts: unknown[]): boolean {
  return texts.some((text) => typeof text === 'string' && ACCOUNT_PROBLEM.test(text));
}
