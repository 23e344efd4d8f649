/**
 * What `bin/kith.js` runs. A known subcommand (kith ls, kith import …) goes to the command line
 * program; `kith serve [flags]`, `kith` alone and `kith -port …` start the service exactly as
 * `node dist/src/main.js` does, with the same flags.
 */
/** Every subcommand of the program (program.ts); anything else goes to the service. */
const COMMANDS = [
  'serve',
  'ls',
  'info',
  'count',
  'search',
  'get',
  'delete',
  'drop',
  'import',
  'export',
  'backup',
  'dump-collection',
  'load-collection',
  'check',
  'shell',
  'cluster',
  'help',
];

const argv = process.argv.slice(2);
const first = argv[0];
// `kith -help` (the service's Go-style spelling) keeps printing the service's flags, as before;
// `kith --help`, `-h` and `help` print the commands and the service's flags.
const HELP = ['-h', '--help'];

if (first === 'serve') {
  // The service reads process.argv itself: drop the word "serve" and hand over.
  process.argv.splice(2, 1);
  await import('../main.js');
} else if (first !== undefined && (COMMANDS.includes(first) || (HELP.includes(first) && argv.length === 1))) {
  const { runProgram } = await import('./program.js');
  process.exitCode = await runProgram(argv);
} else {
  await import('../main.js');
}
