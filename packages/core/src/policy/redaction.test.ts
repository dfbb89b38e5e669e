import { describe, expect, it } from 'vitest';
import { BUILT_IN_REDACTIONS, checkRedactionOptions, redact, redactionsIn, type RedactionPolicy } from './redaction.js';

const all: RedactionPolicy = { kinds: BUILT_IN_REDACTIONS, phoneRegion: null };

/** Seeded personal data of every built-in kind, each in a sentence of chatter. */
const PERSONAL = {
  card_number: ['4111 1111 1111 1111', '5555-5555-5555-4444', '378282246310005', '6011111111111117', '4012888888881881'],
  iban: ['DE89 3704 0044 0532 0130 00', 'GB82WEST12345698765432', 'FR1420041010050500013M02606', 'NL91ABNA0417164300'],
  phone: ['+49 30 901820', '+44 20 7946 0958', '+33 1 42 68 53 00', '+1 202-456-1111'],
  email: ['ana.lopez@example.com', 'j+tag@mail.co.uk', 'Deepak_R@corp-mail.io'],
} as const;

/** Ordinary numbers a conversation is full of: none may be touched. */
const ORDINARY = [
  'We met on 2023-05-08 at 13:45, or 08/05/2023 if you prefer.',
  'It costs 1,299.99 euros, or $24.50 a month, 19% VAT included.',
  'My order 4000123456 and order number 123456789012 both shipped.',
  'Tracking 1Z999AA10123456784 says room 4521 on floor 3.',
  'The ISBN is 978-3-16-148410-0 and the version is v1.13.16.',
  'A 16-digit reference 1234567812345678 and invoice 2023-000142 arrived.',
  'Call me at 5 pm; I ran 10,000 steps in 2024 and paid 4,111.11.',
  'Order 4111111111111112 failed the checksum, so it is not a card.',
];

describe('redact', () => {
  for (const [kind, values] of Object.entries(PERSONAL)) {
    it(`replaces every ${kind} in the seeded sentences (recall 100%)`, () => {
      for (const value of values) {
        const text = `Sure, here it is: ${value}. Thanks for asking!`;
        const result = redact(text, all);
        expect({ value, text: result.text }).toEqual({ value, text: `Sure, here it is: [redacted:${kind}]. Thanks for asking!` });
        expect(result.counts).toEqual({ [kind]: 1 });
      }
    });
  }

  it('leaves dates, prices, order and tracking numbers, ISBNs and versions alone (no false positive)', () => {
    for (const text of ORDINARY) expect(redact(text, all)).toEqual({ text, counts: {} });
  });

  it('redacts only the kinds the policy names, and several in one text', () => {
    const text = 'Mail ana.lopez@example.com or call +49 30 901820; card 4111 1111 1111 1111.';
    expect(redact(text, { kinds: ['email'], phoneRegion: null }).text).toBe('Mail [redacted:email] or call +49 30 901820; card 4111 1111 1111 1111.');
    const both = redact(text, all);
    expect(both.text).toBe('Mail [redacted:email] or call [redacted:phone]; card [redacted:card_number].');
    expect(both.counts).toEqual({ email: 1, phone: 1, card_number: 1 });
    expect(redactionsIn(both.text)).toEqual({ email: 1, phone: 1, card_number: 1 });
  });

  it('finds national phone numbers only with a phone_region', () => {
    const text = 'Call me on (202) 456-1111 tomorrow.';
    expect(redact(text, all).text).toBe(text);
    expect(redact(text, { kinds: ['phone'], phoneRegion: 'US' }).text).toBe('Call me on [redacted:phone] tomorrow.');
  });

  it("applies the operator's own patterns by name, every match", () => {
    const patterns = checkRedactionOptions({ patterns: { employee_id: /\bEMP-\d{6}\b/ } });
    const result = redact('EMP-123456 met EMP-654321 on 2024-01-02.', { kinds: ['employee_id'], phoneRegion: null }, patterns);
    expect(result).toEqual({ text: '[redacted:employee_id] met [redacted:employee_id] on 2024-01-02.', counts: { employee_id: 2 } });
  });

  it("refuses an operator pattern with a bad name, a built-in's name or no RegExp", () => {
    expect(() => checkRedactionOptions({ patterns: { 'Bad-Name': /x/ } })).toThrow(/lower-case/);
    expect(() => checkRedactionOptions({ patterns: { email: /x/ } })).toThrow(/built-in/);
    expect(() => checkRedactionOptions({ patterns: { thing: 'x' as unknown as RegExp } })).toThrow(/RegExp/);
  });
});
