/**
 * Instruction-like content (issue 33): text that addresses a model rather than telling something.
 * Rules of language, not of one dataset: an override of earlier instructions, a new persona, a
 * request for the hidden prompt, a chat role marker or template token, tool-call syntax, an
 * imperative aimed at the assistant, a markdown image (an exfiltration channel). Learning keeps
 * such text as evidence with a `suspicious` mark; retrieval ranks it down when a query asks for
 * instructions or rules.
 *
 * Matching runs on a skeleton of the text: NFKC (fullwidth and styled letters to plain ones),
 * invisible characters removed, lower case, and Cyrillic/Greek letters that look like Latin ones
 * folded to them, and Unicode tag characters read as the ASCII they mirror, so `ＩＧＮＯＲＥ`,
 * `ign\u200Bore`, `іgnore` (Cyrillic і) and `ignore` smuggled in tag characters read as `ignore`.
 */

/** The kinds of instruction-like content {@link instructionSignals} reports. */
export type InstructionSignal =
  | 'override'
  | 'persona'
  | 'prompt_leak'
  | 'role_marker'
  | 'tool_call'
  | 'imperative'
  | 'exfiltration';

const GAP = "[^.!?\\n]{0,60}?";
const RULES: ReadonlyArray<readonly [InstructionSignal, RegExp]> = [
  [
    'override',
    new RegExp(
      `\\b(?:ignore|disregard|forget|override|overrule|bypass|skip|drop|abandon|discard|stop following)\\b${GAP}\\b(?:previous|prior|preceding|above|earlier|all|any|every|your|the|these|those|system|existing|original|initial|safety)\\b${GAP}\\b(?:instructions?|rules?|prompts?|guidelines?|directions?|directives?|constraints?|guardrails?|polic(?:y|ies)|context|messages?|programming|training|restrictions?|orders?)\\b`,
      'u',
    ),
  ],
  ['override', /\b(?:new|updated|revised|real|true|important|urgent|hidden|secret|additional)\s+(?:system\s+)?(?:instructions?|rules?|directives?|orders?)\s*[:\-]/u],
  ['override', /\b(?:system|admin|administrator|developer|security)\s+(?:override|message|notice|update|instruction|command|alert)\s*[:\-!]/u],
  [
    'persona',
    /\b(?:you are now (?:an? |the |in |my |dan\b|called |named |free\b|unrestricted|no longer)|from now on,? you(?: are|'re| will| must| should)?|you will now act|act as (?:if you were |an? |the )|pretend (?:to be|you are|that you)|roleplay as|your new (?:role|instructions?|task|persona|name|goal|objective) (?:is|are)|(?:enter|enable|activate) (?:developer|dan|god|debug|admin|jailbreak) mode|jailbreak|do anything now)\b/u,
  ],
  [
    'prompt_leak',
    new RegExp(
      `\\b(?:reveal|show|print|repeat|output|display|tell|leak|dump|disclose|share|expose|write out|recite|what (?:is|are))\\b${GAP}\\b(?:system|hidden|initial|original|secret|developer|internal|full)\\s+(?:prompt|instructions?|message|rules|configuration|config)\\b`,
      'u',
    ),
  ],
  ['prompt_leak', /\b(?:your|the) (?:system prompt|instructions above|initial instructions|prompt above)\b/u],
  ['role_marker', /(?:^|\n)\s*(?:#+\s*)?(?:system|assistant|developer|human|ai|tool|function)\s*(?::|\]|>)/u],
  ['role_marker', /<\s*\|?\s*\/?\s*(?:im_start|im_end|im_sep|system|user|assistant|developer|endoftext|start_header_id|end_header_id|eot_id|begin_of_text|tool|instructions?|memory[\w-]*|context|prompt|sys)\b/u],
  ['role_marker', /\[\s*\/?\s*(?:inst|sys|system_prompt|tool_calls|available_tools|tool_results)\s*\]|<<\s*\/?\s*sys\s*>>|#{2,}\s*(?:instruction|system|response|input|assistant|user)\s*:/u],
  ['tool_call', /[{,]\s*"(?:tool|tool_calls?|tool_name|function_call|arguments|action_input|recipient_name)"\s*:|"function"\s*:\s*\{/u],
  ['tool_call', /<\s*\/?\s*(?:tool_call|tool_use|function_calls?|invoke|antml|parameter)\b|\b(?:call|invoke|execute) the [\w-]+ (?:tool|function)\b/u],
  [
    'imperative',
    /(?:^|[.!?;:\n]\s*|\b(?:assistant|ai|chatbot|bot|model|llm|gpt|chatgpt|claude|gemini|copilot|agent)\s*[,:]\s*)(?:please\s+)?(?:always|never|you must|you should|you have to|you need to|you are required to|make sure (?:you|to)|be sure to|do not|don't|from now on)\s+(?:\w+\s+)?(?:answer|respond|reply|say(?! never)|tell|reveal|disclose|mention|output|print|obey|refuse|append|pretend)\b/u,
  ],
  ['imperative', /\b(?:when|whenever|if|each time|every time)\s+(?:you|the assistant|the ai|the model|the agent)\s+(?:answer|respond|reply|are asked|get asked|talk|write)\w*\b/u],
  ['imperative', /\b(?:respond|reply|answer) (?:only |just )?(?:with|in|using) (?:the (?:word|phrase|text|string)|"|'|exactly)/u],
  [
    'exfiltration',
    /!\s*\[[^\]\n]*\]\s*\(\s*(?:https?:)?\/\/[^)\s]*\?[^)\s]*=|\b(?:send|post|upload|forward|exfiltrate|transmit|leak|append)\b (?:the |all |your |this |my |our )?(?:whole |entire |full )?(?:conversation|chat|data|system prompt|prompt|secrets?|passwords?|history|messages|memor(?:y|ies)|context|keys?|credentials|tokens?)\b[^.!?\n]{0,60}\b(?:to|at|via)\b|\b(?:include|add|append|put|render|embed)\b[^.!?\n]{0,40}\b(?:link|url|image)\b[^.!?\n]{0,30}(?:https?:\/\/|\bevery (?:answer|reply|response)\b)/u,
  ],
];

/** Cyrillic and Greek letters that render like Latin ones (after lower-casing). */
const CONFUSABLES: Record<string, string> = {
  а: 'a', в: 'b', е: 'e', ё: 'e', к: 'k', м: 'm', н: 'h', о: 'o', р: 'p', с: 'c', т: 't', у: 'y', х: 'x', ѕ: 's', і: 'i', ї: 'i', ј: 'j', ԁ: 'd', ԛ: 'q', ԝ: 'w', ɡ: 'g', һ: 'h', ӏ: 'l',
  α: 'a', β: 'b', ε: 'e', η: 'n', ι: 'i', κ: 'k', ν: 'v', ο: 'o', ρ: 'p', τ: 't', υ: 'u', χ: 'x', γ: 'y', ϲ: 'c', ј̇: 'j',
};
const CONFUSABLE = new RegExp(`[${Object.keys(CONFUSABLES).filter((key) => key.length === 1).join('')}]`, 'gu');
const INVISIBLE = /[\u00AD\u034F\u061C\u180B-\u180F\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB\u{E0000}-\u{E001F}\u{E007F}]/gu;
/** Unicode tag characters that mirror ASCII ("ASCII smuggling": text a model reads but a person does not see). */
const TAG_CHARACTERS = /[\u{E0020}-\u{E007E}]/gu;
const OPENING_ANGLES = /[\u2039\u3008\u2329\u27E8\u276E\u02C2\u1438\u276C\u2770]/gu;
const CLOSING_ANGLES = /[\u203A\u3009\u232A\u27E9\u276F\u02C3\u1433\u276D\u2771]/gu;

const ASCII = /^[\x00-\x7F]*$/;

/** The text as the rules read it (see the module comment). */
export function instructionSkeleton(text: string): string {
  // Plain ASCII (most text) has nothing to normalise, fold or remove: only case, quotes and spaces.
  if (ASCII.test(text)) return text.toLowerCase().replace(/`/g, "'").replace(/\r\n?/g, '\n').replace(/[^\S\n]+/gu, ' ');
  return text
    .normalize('NFKC')
    .replace(TAG_CHARACTERS, (tag) => String.fromCodePoint(tag.codePointAt(0)! - 0xe0000))
    .replace(INVISIBLE, '')
    .toLowerCase()
    .replace(CONFUSABLE, (letter) => CONFUSABLES[letter] ?? letter)
    .replace(OPENING_ANGLES, '<')
    .replace(CLOSING_ANGLES, '>')
    .replace(/[’‘`´]/gu, "'")
    .replace(/[“”„]/gu, '"')
    .replace(/\r\n?/g, '\n')
    .replace(/[^\S\n]+/gu, ' ');
}

/** The kinds of instruction-like content in `text`, each once, in rule order (empty: none). */
export function instructionSignals(text: string): InstructionSignal[] {
  const skeleton = instructionSkeleton(text);
  const found = new Set<InstructionSignal>();
  for (const [signal, rule] of RULES) if (!found.has(signal) && rule.test(skeleton)) found.add(signal);
  return [...found];
}

/** Whether `text` holds instruction-like content ({@link instructionSignals} finds any). */
export function isInstructionLike(text: string): boolean {
  return instructionSignals(text).length > 0;
}

/**
 * Whether a query asks about instructions, rules or how the assistant is set up ("What are your
 * instructions?", "Which rules apply to refunds?"): then memories flagged suspicious rank lower.
 */
export function asksForInstructions(query: string): boolean {
  return /\b(?:instructions?|instructed|rules?|guidelines?|polic(?:y|ies)|directives?|prompts?|configured|configuration|protocol|procedures?|supposed to|allowed to|permitted to|what (?:should|must|do) you (?:do|say)|how (?:should|must) you|(?:told|asked) (?:you )?to)\b/u.test(instructionSkeleton(query));
}
