/**
 * The shell's command-line words. Words are separated by whitespace; within a word,
 * - 'single quotes' keep everything literally, "double quotes" too except \" and \\;
 * - a word that starts with [ or { runs until its brackets balance (brackets inside JSON strings
 *   do not count), so `search docs [0.1, 0.2]` and `count docs {"must": [ … ]}` need no quoting.
 */
export class TokenizeError extends Error {
  override readonly name = 'TokenizeError';
}

export function tokenize(line: string): string[] {
  const words: string[] = [];
  let i = 0;
  while (i < line.length) {
    while (i < line.length && /\s/.test(line[i] as string)) i++;
    if (i >= line.length) break;
    let word = '';
    if (line[i] === '[' || line[i] === '{') {
      const start = i;
      let depth = 0;
      let inString = false;
      for (; i < line.length; i++) {
        const c = line[i] as string;
        if (inString) {
          if (c === '\\') i++;
          else if (c === '"') inString = false;
        } else if (c === '"') inString = true;
        else if (c === '[' || c === '{') depth++;
        else if (c === ']' || c === '}') {
          depth--;
          if (depth === 0) {
            i++;
            break;
          }
        }
      }
      if (depth !== 0 || inString) throw new TokenizeError(`unbalanced ${line[start]}: ${line.slice(start)}`);
      word = line.slice(start, i);
      words.push(word);
      continue;
    }
    while (i < line.length && !/\s/.test(line[i] as string)) {
      const c = line[i] as string;
      if (c === "'" || c === '"') {
        const end = c === "'" ? line.indexOf("'", i + 1) : closingDoubleQuote(line, i + 1);
        if (end < 0) throw new TokenizeError(`a ${c} quote is not closed`);
        const inner = line.slice(i + 1, end);
        word += c === "'" ? inner : inner.replace(/\\(["\\])/g, '$1');
        i = end + 1;
      } else {
        word += c;
        i++;
      }
    }
    words.push(word);
  }
  return words;
}

function closingDoubleQuote(line: string, from: number): number {
  for (let i = from; i < line.length; i++) {
    if (line[i] === '\\') i++;
    else if (line[i] === '"') return i;
  }
  return -1;
}
