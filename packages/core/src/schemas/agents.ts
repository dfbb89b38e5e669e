import { z } from 'zod';
import { agentId, dateTime, metadataObject, text } from './common.js';
import { reviewMode } from './review.js';
import { thread } from './threads.js';

/**
 * Whose memories a request acting for a person (`X-SP-End-User`) draws on (an extension, issue 42):
 * `agent` (the spec's default: every memory of the agent) or `end_user` (that person's threads and
 * threads of no person). See `agents/memory-scope.ts`.
 */
export const memoryScope = z.enum(['agent', 'end_user']).meta({ id: 'MemoryScope' });

/** A category name: lower-case words joined by `_` or `-` (issue 44). */
export const categoryName = z.string().regex(/^[a-z][a-z0-9_-]{0,39}$/, 'a category name is lower-case letters, digits, _ and -, starting with a letter (at most 40)');

/** The longest pattern of a rule, and how many one rule may give (issue 44). */
export const MAX_PATTERN_CHARS = 200;
export const MAX_RULE_PATTERNS = 10;

/**
 * A rule over a said turn (issue 44): every field given must match (speaker one of `speakers`; text
 * holding one of `keywords` as a word or phrase, case-insensitive; text matching one of `patterns`;
 * the memory's category one of `categories`, checked on each memory the writer makes of the turn).
 */
export const turnRule = z
  .object({
    speakers: z.array(text().min(1).max(200)).min(1).max(50).optional(),
    keywords: z.array(text().min(1).max(100)).min(1).max(50).optional(),
    patterns: z.array(z.string().min(1).max(MAX_PATTERN_CHARS)).min(1).max(MAX_RULE_PATTERNS).optional(),
    categories: z.array(categoryName).min(1).max(30).optional(),
  })
  .strict()
  .refine((rule) => rule.speakers !== undefined || rule.keywords !== undefined || rule.patterns !== undefined || rule.categories !== undefined, 'a rule names speakers, keywords, patterns or categories')
  .meta({ id: 'TurnRule' });

/** One category of an agent's closed list (issue 44). */
export const memoryCategory = z
  .object({
    name: categoryName,
    description: text().min(1).max(500).optional(),
    keywords: z.array(text().min(1).max(100)).min(1).max(50).optional(),
  })
  .strict()
  .meta({ id: 'MemoryCategory' });

/** The longest `instructions` an extraction policy may give the LLM writer (characters). */
export const MAX_POLICY_INSTRUCTIONS = 4000;

/**
 * What an agent keeps, by rule (an extension, issue 44): the kinds of personal data replaced by a
 * marker (`[redacted:email]`) in every turn before it is stored or embedded (`policy/redaction.ts`),
 * include/exclude rules, categories, instructions and language for the LLM writer, and the version.
 */
export const extractionPolicy = z
  .object({
    redact: z
      .array(z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, 'a kind is a lower-case name such as card_number'))
      .max(20)
      .refine((kinds) => new Set(kinds).size === kinds.length, 'each kind once')
      .optional()
      .describe(
        'Kinds of personal data replaced by [redacted:<kind>] in each turn before anything is stored, embedded or learned: ' +
          'card_number (Luhn-checked), iban (checksum-checked), phone (international form, or national with phone_region), email, ' +
          "and the operator's own kinds (service option redaction.patterns). Applies to turns observed after the change.",
      ),
    exclude: z
      .array(turnRule)
      .max(20)
      .optional()
      .describe('Turns never learned from: a said turn matching any rule is stored (it was observed) but the writer never sees it; its receipt names the rule.'),
    include: z
      .array(turnRule)
      .max(20)
      .optional()
      .describe('When given, only said turns matching at least one rule are learned from (exclude still wins).'),
    categories: z
      .array(memoryCategory)
      .max(30)
      .refine((list) => new Set(list.map((c) => c.name)).size === list.length, 'each category name once')
      .optional()
      .describe(
        'A closed list of categories: each memory learned gets at most one of them (by keyword rules offline, by the nearest category with a sentence-model embedder, proposed by the model with the LLM writer); a category outside the list is never stored.',
      ),
    only_categories: z
      .boolean()
      .optional()
      .describe('true: a memory that fits none of `categories` is not kept. Default false: it is kept without a category.'),
    instructions: text()
      .min(1)
      .max(MAX_POLICY_INSTRUCTIONS)
      .optional()
      .describe('Free-text guidance for the LLM writer (what is worth remembering), passed to the model as fenced data, never as its own instructions. The default writer ignores it.'),
    language: z
      .union([z.literal('speaker'), z.string().regex(/^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$/, 'a BCP 47 language tag such as de or pt-BR')])
      .optional()
      .describe('The language the LLM writer writes memories in: "speaker" (the default) keeps each speaker\'s language; a BCP 47 tag translates to it.'),
    version: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Read-only: the policy version, set by the service (1 when a policy is first given, +1 each time a create, PATCH or import changes it); a value sent is ignored. Each memory records the version that kept it.'),
    phone_region: z
      .string()
      .regex(/^[A-Z]{2}$/, 'a two-letter ISO 3166 country code such as DE')
      .optional()
      .describe('Also find phone numbers written in this country\'s national form ("030 901820" for DE).'),
  })
  .strict()
  .meta({ id: 'ExtractionPolicy' });

/**
 * Memory decay (an extension, issue 42): a half-life per kind of memory (learned from a turn, or
 * from a document), applied at read time as a rank multiplier (0.5 per half-life since it was
 * learned or last cited in an answer); pinned memories never decay. A kind absent does not decay.
 */
export const memoryDecay = z
  .object({
    turn_half_life_days: z.number().min(1).max(36500).optional().describe('Half-life of memories learned from conversation turns, in days (1 to 36500).'),
    document_half_life_days: z.number().min(1).max(36500).optional().describe('Half-life of memories learned from documents, in days (1 to 36500).'),
  })
  .strict()
  .meta({ id: 'MemoryDecay' });

export const agentConfig = z
  .object({
    role: text().min(1).max(200),
    objective: text().min(1).max(2000),
    metadata: metadataObject.optional(),
    memory_scope: memoryScope
      .optional()
      .describe(
        'An extension (issue 42). "agent" (the default when absent): learned memory is shared across the agent, and a request with X-SP-End-User answers from every memory. ' +
          '"end_user": a request with X-SP-End-User reads only memories learned in that person\'s threads and in threads of no person. Kept by a PATCH whose agent_config omits it.',
      ),
    extraction_policy: extractionPolicy.optional().describe('An extension (issue 44): what is redacted from every turn, which turns and memories are kept, the categories, and guidance for the LLM writer. Kept by a PATCH whose agent_config omits it.'),
    memory_decay: memoryDecay
      .optional()
      .describe('An extension (issue 42): old memories rank lower (a half-life per kind, reset when an answer cites one; pinned ones never decay). Kept by a PATCH whose agent_config omits it.'),
    review_mode: reviewMode
      .optional()
      .describe(
        'An extension (issue 43): which memories learning holds for a person to approve before chat, recall and search use them. "off" (the default when absent): none; ' +
          '"inferred": those whose words are not the source\'s (a model writer\'s paraphrase, a resolved date); "all": every new memory. Kept by a PATCH whose agent_config omits it.',
      ),
  })
  .strict()
  .meta({ id: 'AgentConfig' });

export const agentStatus = z.enum(['initializing', 'ready', 'failed', 'deleting', 'deleted']);

export const agent = z
  .object({
    agent_id: agentId,
    status: agentStatus,
    created_at: dateTime,
    updated_at: dateTime,
    access: z.literal('owner'),
    agent_config: agentConfig,
    expires_at: dateTime.nullable(),
    resumed_from_turn: z.number().int().min(0),
    visibility: z.literal('external'),
    threads: z.array(thread),
  })
  .strict()
  .meta({ id: 'Agent' });

/** `POST /v1/agents` (DESIGN "Decisions"). */
export const createAgentBody = z
  .object({
    agent_config: agentConfig,
    visibility: z.literal('external').optional(),
    restore_from: agentId.optional(),
  })
  .strict()
  .meta({ id: 'CreateAgentRequest' });

/** `PATCH /v1/agents/{agent_id}`: every field optional; `agent_config` replaces the whole config. */
export const patchAgentBody = z
  .object({ agent_config: agentConfig.optional() })
  .strict()
  .meta({ id: 'PatchAgentRequest' });

/** `DELETE` of an agent or a thread (DESIGN "Decisions"). */
export const agentDeleteAccepted = z
  .object({ agent_id: agentId, status: z.literal('deleting') })
  .strict()
  .meta({ id: 'AgentDeleteAccepted' });

export const agentList = z.array(agent).meta({ id: 'AgentList' });

