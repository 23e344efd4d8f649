/**
 * What `bin/kith.js` runs. A known subcommand (kith ls, kith import …) goes to the command line
 * program; `kith serve [flags]`, `kith` alone and `kith -port …` start the service exactly as
 * `node dist/src/main.js` does, with the same flags.
 */
/** Every subcommand of the program (program.ts); anything else goes to the service. */
const COMMANDS = ['serve', 'ls', 'info', 'count', 'search', 'get', 'delete', 'drop', 'import', 'export', 'help'];

const argv = process.argv.slice(2);
const first = argv[0];
const HELP = ['-h', '--help', '-help'];

if (first === 'serve') {
  // The service reads process.argv itself: drop the word "serve" and hand over.
  process.argv.splice(2, 1);
  await import('../main.js');
} else if (first !== undefined && (COMMANDS.includes(first) || (HELP.includes(first) && argv.length === 1))) {
  const { runProgram } = await import('./program.js');
  process.exitCode = await runProgram(first === '-help' ? ['--help'] : argv);
} else {
  await import('../main.js');
}
