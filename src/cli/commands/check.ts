/**
 * `kith check FILE`: verifies a database file read-only (db/check-database.ts) and prints what it
 * found. Exit 0 when the file is sound, 1 with every problem listed otherwise (a file that is no
 * kith database, or whose pages are broken, is one of those: reported, never opened).
 */
import type { Command } from 'commander';
import { checkDatabase, formatCheckReport } from '../../db/check-database.js';
import { UsageError } from '../errors.js';
import { toJson } from '../output.js';

/** Sound or not: a failed check is an exit code, not an exception (the report is already printed). */
export class CheckFailed extends Error {
  override readonly name = 'CheckFailed';
}

export function registerCheckCommand(program: Command): void {
  program
    .command('check')
    .description('verify a database file without changing it: every record, checksum and graph invariant; exit 1 if anything is wrong')
    .argument('<file>')
    .option('--json', 'print the report as JSON')
    .action(async (file: string, options: { json?: boolean }) => {
      if (file === '') throw new UsageError('check: expected a database file path');
      const report = await checkDatabase(file);
      process.stdout.write(options.json === true ? `${toJson(report, 2)}\n` : formatCheckReport(report));
      if (report.problems.length === 0) return;
      // A file refused before it was opened has one problem (or a page walk's few): say it on stderr too.
      const more = report.problems.length > 1 ? ` (and ${report.problems.length - 1} more)` : '';
      const what =
        report.fileState === 'sound'
          ? `${report.problems.length} problem(s) found`
          : `${report.fileState === 'damaged' ? 'damaged' : 'not a kith database'}: ${report.problems[0]}${more}`;
      throw new CheckFailed(`${file}: ${what}`);
    });
}
