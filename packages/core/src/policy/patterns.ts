/**
 * Regular expressions an API caller gives in an extraction policy's include/exclude rules
 * (`patterns`, issue 44). They run on text said by other people, so a pattern whose matching can
 * take exponential or high-polynomial time (ReDoS) is refused when the config is stored, by a
 * conservative check of its shape, and every pattern sees only the first
 * {@link PATTERN_TEXT_CHARS} characters of a turn:
 * - it must compile as a JavaScript regular expression with the `u` flag (matching is
 *   case-insensitive);
 * - no backreferences (`\1`, `\k<name>`) and no lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`): the
 *   constructs no linear-time engine supports;
 * - no repeated group that itself holds a repetition or an alternation (`(a+)+`, `(a|ab)*`): the
 *   shapes of exponential backtracking;
 * - at most one unbounded repetition (`*`, `+`, `{n,}`, or a bound above 20), and at most
 *   {@link MAX_REPETITIONS} repetitions in all: two unbounded ones next to each other (`\d+\d+x`)
 *   already backtrack in cubic time.
 */

/** How much of a turn's text a pattern looks at (characters from the start). */
export const PATTERN_TEXT_CHARS = 4000;
/** Repetitions (`?` aside) one pattern may hold. */
export const MAX_REPETITIONS = 6;
/** The largest bound of a repetition counted as bounded (`{1,20}`). */
const BOUNDED = 20;

/** Why a pattern is refused (a sentence), or null when it is accepted. */
export function patternProblem(source: string): string | null {
  try {
    new RegExp(source, 'iu');
  } catch (error) {
    return `is not a valid regular expression (${(error as Error).message})`;
  }
  // One frame per open group: whether it holds a repetition or an alternation.
  const frames: { risky: boolean }[] = [{ risky: false }];
  let unbounded = 0;
  let repetitions = 0;
  /** What the next quantifier repeats: a group (risky or not), or a single atom. */
  let last: { group: boolean; risky: boolean } | null = null;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      const next = source[i + 1] ?? '';
      if (/[1-9]/.test(next) || next === 'k') return 'uses a backreference (\\1, \\k<name>), which this service does not run';
      // \p{...}, \u{...}, \x.. and the like are one atom.
      if ((next === 'p' || next === 'P' || next === 'u') && source[i + 2] === '{') i = source.indexOf('}', i);
      else i += 1;
      last = { group: false, risky: false };
      continue;
    }
    if (c === '[') {
      // A character class is one atom; skip to its closing bracket (escapes inside honoured).
      let j = i + 1;
      if (source[j] === '^') j++;
      if (source[j] === ']') j++;
      while (j < source.length && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
      i = j;
      last = { group: false, risky: false };
      continue;
    }
    if (c === '(') {
      if (source.startsWith('(?=', i) || source.startsWith('(?!', i) || source.startsWith('(?<=', i) || source.startsWith('(?<!', i)) {
        return 'uses a lookahead or lookbehind, which this service does not run';
      }
      frames.push({ risky: false });
      if (source.startsWith('(?:', i)) i += 2;
      else if (source.startsWith('(?<', i)) i = source.indexOf('>', i);
      last = null;
      continue;
    }
    if (c === ')') {
      const frame = frames.pop()!;
      last = { group: true, risky: frame.risky };
      if (frame.risky) frames[frames.length - 1]!.risky = true;
      continue;
    }
    if (c === '|') {
      frames[frames.length - 1]!.risky = true;
      last = null;
      continue;
    }
    const quantifier = c === '*' || c === '+' || c === '?' ? { max: c === '?' ? 1 : Infinity } : c === '{' ? braces(source, i) : null;
    if (quantifier && last) {
      if (c === '{') i = source.indexOf('}', i);
      if (source[i + 1] === '?') i++; // lazy
      if (quantifier.max <= 1) {
        frames[frames.length - 1]!.risky = true;
        last = null;
        continue;
      }
      if (last.group && last.risky) return 'repeats a group that itself holds a repetition or an alternation (such as (a+)+ or (a|ab)*), which can take exponential time';
      repetitions++;
      if (quantifier.max > BOUNDED) unbounded++;
      if (unbounded > 1) return `holds more than one unbounded repetition (*, +, {n,} or a bound above ${BOUNDED}); bound all but one, e.g. {1,${BOUNDED}}`;
      if (repetitions > MAX_REPETITIONS) return `holds more than ${MAX_REPETITIONS} repetitions`;
      frames[frames.length - 1]!.risky = true;
      last = null;
      continue;
    }
    last = { group: false, risky: false };
  }
  return null;
}

/** `{n}`, `{n,}`, `{n,m}` at `at`: its upper bound; null when the brace is a literal. */
function braces(source: string, at: number): { max: number } | null {
  const match = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(at));
  if (!match) return null;
  return { max: match[2] === undefined ? Number(match[1]) : match[3] === '' ? Infinity : Number(match[3]) };
}

const compiled = new Map<string, RegExp>();

/** Whether `text` (its first {@link PATTERN_TEXT_CHARS} characters) matches one of the checked `patterns`, case-insensitive. */
export function matchesPattern(patterns: readonly string[], text: string): boolean {
  const head = text.length > PATTERN_TEXT_CHARS ? text.slice(0, PATTERN_TEXT_CHARS) : text;
  return patterns.some((source) => {
    let pattern = compiled.get(source);
    if (!pattern) {
      if (compiled.size >= 1000) compiled.clear();
      compiled.set(source, (pattern = new RegExp(source, 'iu')));
    }
    return pattern.test(head);
  });
}
