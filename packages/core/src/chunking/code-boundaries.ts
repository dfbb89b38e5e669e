/**
 * Where source code may be cut so definitions stay whole: before each top-level definition (with
 * the comments and decorators right above it attached), and at blank lines as a second choice.
 */

/** A line that starts a definition at the left margin (functions, classes, types, impls, ...). */
const DEFINITION = new RegExp(
  [
    String.raw`^(export\s+)?(default\s+)?(declare\s+)?(abstract\s+)?(async\s+)?(function\*?|class|interface|type|enum|namespace|module)\b`,
    String.raw`^(export\s+)?(const|let|var)\s+[\w$]+\s*(:[^=]+)?=\s*(async\s+)?(\(|function\b|class\b|[\w$]+\s*=>)`,
    String.raw`^(async\s+)?def\s+\w+|^class\s+\w+`,
    String.raw`^(pub(\([^)]*\))?\s+)?(async\s+)?(unsafe\s+)?(fn|struct|enum|trait|impl|mod|union|macro_rules!)\b`,
    String.raw`^func\s|^type\s+\w+\s+(struct|interface)\b`,
    String.raw`^((public|private|protected|internal|static|final|abstract|sealed|override|open|data|inline)\s+)*(class|interface|object|record|enum|fun|void|[\w<>\[\],]+\s+\w+\s*\()`,
    String.raw`^(sub|proc|procedure|function|defmodule|defp?|module|impl)\b`,
    String.raw`^(CREATE|ALTER)\s+(OR\s+REPLACE\s+)?(TABLE|VIEW|FUNCTION|PROCEDURE|INDEX|TRIGGER)\b`,
  ].join('|'),
  'i',
);
/** Lines that belong to the definition below them: comments, doc comments, decorators, attributes. */
const ATTACHED = /^\s*(\/\/|\/\*|\*|#(?!!)|--|@\w|#\[|"""|''')/;

/** Offsets (line starts) before which a piece may start in `[from, to)`: definition starts. */
export function definitionBoundaries(text: string, from: number, to: number): { definitions: number[]; blankLines: number[] } {
  const definitions: number[] = [];
  const blankLines: number[] = [];
  const lineStartsList: number[] = [];
  let at = from;
  while (at < to) {
    lineStartsList.push(at);
    const newline = text.indexOf('\n', at);
    if (newline === -1 || newline + 1 >= to) break;
    at = newline + 1;
  }
  const lineAt = (index: number): string => {
    const start = lineStartsList[index] ?? to;
    const end = text.indexOf('\n', start);
    return text.slice(start, end === -1 || end > to ? to : end);
  };
  for (let index = 1; index < lineStartsList.length; index++) {
    const line = lineAt(index);
    const start = lineStartsList[index] ?? to;
    if (line.trim() === '') {
      const next = lineStartsList[index + 1];
      if (next !== undefined && lineAt(index + 1).trim() !== '') blankLines.push(next);
      continue;
    }
    if (!DEFINITION.test(line)) continue;
    // Attach the comment/decorator lines right above (no blank line between).
    let first = index;
    while (first - 1 >= 1 && lineAt(first - 1).trim() !== '' && ATTACHED.test(lineAt(first - 1))) first--;
    const previous = lineAt(first - 1);
    // A definition start inside an unfinished statement (previous line ends with an operator) is not a cut.
    if (/[,(=+\-*/&|\\]\s*$/.test(previous)) continue;
    definitions.push(lineStartsList[first] ?? start);
  }
  return { definitions, blankLines };
}
