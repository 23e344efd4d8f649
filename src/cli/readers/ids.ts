/**
 * `--ids FILE` for the binary formats: point ids read from a second file, one JSON id a line
 * (a string, or a non-negative integer), line i naming vector i, as `kith export --format npy`
 * writes them. The two files must have as many entries as each other.
 */
import { basename } from 'node:path';
import { checkLine } from './jsonl.js';
import { InputFileError, type SourcePoint } from './source.js';
import { readTextLines } from './text-lines.js';
import { parseJson } from '../../core/json-text.js';

export async function* withIds(source: AsyncIterable<SourcePoint>, idsPath: string): AsyncGenerator<SourcePoint> {
  const label = basename(idsPath);
  const lines = readTextLines(idsPath, label);
  let lineNumber = 0;
  let vectors = 0;
  try {
    for await (const item of source) {
      const next = await lines.next();
      lineNumber++;
      if (next.done === true) throw new InputFileError(`${label}: ${lineNumber - 1} ids, but the vectors go on (${item.location})`);
      let id: unknown;
      try {
        id = parseJson(next.value.text);
      } catch (error) {
        throw new InputFileError(`${label}:${lineNumber}: not valid JSON (${(error as Error).message})`);
      }
      const checked = checkLine({ id, vector: item.point.vector }, item.point.vector.length);
      if (typeof checked === 'string') throw new InputFileError(`${label}:${lineNumber}: ${checked}`);
      vectors++;
      yield { ...item, location: `${item.location} (${label}:${lineNumber})`, point: { ...item.point, id: checked.id } };
    }
    const rest = await lines.next();
    if (rest.done !== true) throw new InputFileError(`${label}:${lineNumber + 1}: more ids than the ${vectors} vectors`);
  } finally {
    // Stopped early (a bad vector, an interrupted import): the ids file is closed too.
    await lines.return(undefined);
  }
}
