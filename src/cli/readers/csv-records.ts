/**
 * An RFC 4180 record reader: fields separated by commas (or another delimiter: a tab for TSV),
 * records by CRLF or LF; a field in double quotes may hold delimiters, line breaks and doubled
 * quotes (`""` is one `"`). Streams the file line by line (text-lines.ts: UTF-8 checked, a byte
 * order mark skipped) and yields each record with the line it starts on, so that errors can name
 * `FILE:LINE` even when an earlier field spans several lines.
 */
import { InputFileError } from './source.js';
import { readTextLines } from './text-lines.js';

export interface CsvRecord {
  readonly fields: string[];
  /** The physical line (1-based) the record starts on. */
  readonly line: number;
  /** Bytes of the file read so far (for the progress bar). */
  readonly bytesRead: number;
}

/** `delimiter`: one character, not a quote nor a line break (checked by the command). */
export async function* readCsvRecords(path: string, label: string, delimiter = ','): AsyncGenerator<CsvRecord> {
  let fields: string[] = [];
  let field = '';
  /** 'start': at a field's start; 'plain': in an unquoted field; 'quoted': inside quotes; 'closed': just after a closing quote. */
  let state: 'start' | 'plain' | 'quoted' | 'closed' = 'start';
  let line = 1;
  let recordLine = 1;
  let bytesRead = 0;
  let pendingCr = false;
  const fail = (problem: string): never => {
    throw new InputFileError(`${label}:${line}: ${problem}`);
  };
  const endRecord = (): CsvRecord => {
    fields.push(field);
    const record = { fields, line: recordLine, bytesRead };
    fields = [];
    field = '';
    state = 'start';
    return record;
  };
  for await (const chunk of readTextLines(path, label)) {
    bytesRead = chunk.bytesRead;
    const text = chunk.ended ? `${chunk.text}\n` : chunk.text;
    const out: CsvRecord[] = [];
    for (let i = 0; i < text.length; i++) {
      const c = text[i] as string;
      if (pendingCr) {
        pendingCr = false;
        if (c === '\n') continue;
      }
      if (state === 'quoted') {
        if (c === '"') state = 'closed';
        else {
          if (c === '\n') line++;
          field += c;
        }
        continue;
      }
      if (state === 'closed' && c === '"') {
        // A doubled quote inside a quoted field.
        field += '"';
        state = 'quoted';
        continue;
      }
      if (c === delimiter) {
        fields.push(field);
        field = '';
        state = 'start';
        continue;
      }
      if (c === '\n' || c === '\r') {
        pendingCr = c === '\r';
        // A blank line between records is skipped, as a trailing newline is.
        if (!(state === 'start' && fields.length === 0 && field === '')) out.push(endRecord());
        line++;
        recordLine = line;
        continue;
      }
      if (state === 'closed') fail(`unexpected ${JSON.stringify(c)} after a closing quote (a quote inside a quoted field is written "")`);
      if (c === '"') {
        if (state === 'plain') fail('a quote inside an unquoted field (quote the whole field and double the quote: "a ""b"" c")');
        state = 'quoted';
        continue;
      }
      field += c;
      state = 'plain';
    }
    yield* out;
  }
  if (state === 'quoted') throw new InputFileError(`${label}:${recordLine}: a quoted field is not closed before the end of the file`);
  if (!(state === 'start' && fields.length === 0 && field === '')) yield endRecord();
}
