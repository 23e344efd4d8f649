/**
 * The `kith` command line as a commander program: the data commands (ls, info, count, search,
 * get, delete, drop, import, export), backup, dump-collection, load-collection, check and the interactive shell. `kith serve` and `kith` with service flags start the service
 * (entry.ts dispatches those before this program is built).
 */
import { Command, CommanderError } from 'commander';
import { KithClientError } from '../api/client/kith-client.js';
import { isKithError } from '../core/errors.js';
import { registerBackupCommand } from './commands/backup.js';
import { registerCheckCommand } from './commands/check.js';
import { registerCollectionFileCommands } from './commands/collection-file.js';
import { registerClusterCommands } from './commands/cluster.js';
import { registerCollectionCommands } from './commands/collections.js';
import { registerExportCommand } from './commands/export.js';
import { registerImportCommand } from './commands/import.js';
import { registerPointCommands } from './commands/points.js';
import { registerShellCommand } from './commands/shell.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, FailureWithNotes, UsageError } from './errors.js';
import { USAGE } from './flags.js';

/** `argv`: the words after `kith`, as given (an import prints them back in the command that resumes it). */
export function buildProgram(argv: readonly string[] = []): Command {
  const program = new Command('kith')
    .description('kith, a vector database: run the service, or work with a database file (--db) or a running server (--url)')
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ writeErr: (text) => process.stderr.write(text), writeOut: (text) => process.stdout.write(text) });
  program
    .command('serve')
    .description('start the service (the same as kith with no command); kith serve -help lists its flags')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments();
  registerCollectionCommands(program);
  registerPointCommands(program);
  registerImportCommand(program, argv);
  registerExportCommand(program);
  registerBackupCommand(program);
  registerCollectionFileCommands(program);
  registerCheckCommand(program);
  registerShellCommand(program);
  registerClusterCommands(program);
  program.addHelpText('after', `\nThe service (kith serve, or kith with no command):\n\n${USAGE.replace(/^Usage: kith/, 'Usage: kith [serve]')}\n`);
  return program;
}

/** Runs the program on `argv` (without node and script) and returns the exit code; never throws. */
export async function runProgram(argv: readonly string[]): Promise<number> {
  const program = buildProgram(argv);
  // `kith export C | head`: the reader went away; stop quietly instead of a stack trace.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(EXIT_OK);
    throw error;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are exits too, with code 0; every other commander error is a usage error.
      return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`kith: ${error.message}\n(add --help for usage)\n`);
      return EXIT_USAGE;
    }
    const failure = error instanceof FailureWithNotes ? error.cause : error;
    const code = isKithError(failure) || failure instanceof KithClientError ? ` [${failure.code}]` : '';
    const message = failure instanceof Error ? failure.message : String(failure);
    const notes = error instanceof FailureWithNotes ? error.notes.map((note) => `kith: ${note}\n`).join('') : '';
    process.stderr.write(`kith: ${message}${code}\n${notes}`);
    return error instanceof FailureWithNotes ? error.exitCode : EXIT_FAILURE;
  }
}
