import { z } from 'zod';
import { agentId, dateTime, metadataObject, text } from './common.js';
import { thread } from './threads.js';

/**
 * Whose memories a request acting for a person (`X-SP-End-User`) draws on (an extension, issue 42):
 * `agent` (the spec's default: every memory of the agent) or `end_user` (that person's threads and
 * threads of no person). See `agents/memory-scope.ts`.
 */
export const memoryScope = z.enum(['agent', 'end_user']).meta({ id: 'MemoryScope' });

/**
 * What an agent keeps, by rule (an extension, issue 44): the kinds of personal data replaced by a
 * marker (`[redacted:email]`) in every turn before it is stored or embedded. See `policy/redaction.ts`.
 */
/** A rule over a said turn (issue 44): every field given must match (speaker one of `speakers`; text holding one of `keywords` as a word or phrase, case-insensitive). */
export const turnRule = z
  .object({
    speakers: z.array(text().min(1).max(200)).min(1).max(50).optional(),
    keywords: z.array(text().min(1).max(100)).min(1).max(50).optional(),
  })
  .strict()
  .refine((rule) => rule.speakers !== undefined || rule.keywords !== undefined, 'a rule names speakers, keywords or both')
  .meta({ id: 'TurnRule' });

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
    extraction_policy: extractionPolicy.optional().describe('An extension (issue 44): what is redacted from every turn before it is stored.'),
    memory_decay: memoryDecay
      .optional()
      .describe('An extension (issue 42): old memories rank lower (a half-life per kind, reset when an answer cites one; pinned ones never decay). Kept by a PATCH whose agent_config omits it.'),
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

