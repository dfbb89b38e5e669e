import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { analyze, detectLanguage } from '@memory-agents/core/adapter';
import { hasShared, sharedPath } from '../test/support/shared-data.js';

type Sample = { conversation: Record<string, unknown>; qa: { question: string }[] };

/**
 * Issue 44 keeps English analysis byte for byte: the terms of every LoCoMo dev turn and question
 * hash to what the analyzer before language detection made (computed with main at e297b48), so
 * the full-text terms stored by every index before the change are what the same text makes now.
 */
const BEFORE = { texts: 3759, sha256: 'c70e48b10f4cbce197398bcc04ce55171d50ab303990e1f07177369d50299345' };

describe.skipIf(!hasShared('eval-data', 'English analysis unchanged on LoCoMo dev'))('English analysis unchanged (issue 44)', () => {
  it('LoCoMo dev turns and questions: all English, terms identical to before', async () => {
    const samples = JSON.parse(await readFile(sharedPath('eval-data/locomo/locomo-dev.json'), 'utf8')) as Sample[];
    const hash = createHash('sha256');
    let texts = 0;
    const other: string[] = [];
    const add = (text: string) => {
      texts++;
      if (detectLanguage(text) !== 'en') other.push(text);
      hash.update(`${analyze(text).join(' ')}\n`);
    };
    for (const sample of samples) {
      for (const value of Object.values(sample.conversation)) if (Array.isArray(value)) for (const turn of value as { text: string }[]) add(turn.text);
      for (const qa of sample.qa) add(qa.question);
    }
    expect(other).toEqual([]);
    expect({ texts, sha256: hash.digest('hex') }).toEqual(BEFORE);
  });
});
