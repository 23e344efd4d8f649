/**
 * Asking before something that cannot be undone (`kith drop`). Only a person at a terminal can
 * answer: without one (a script, a pipe) the command must be told up front with `--yes`.
 */
import { createInterface } from 'node:readline';

/** Whether an answer is yes: `y` or `yes`, any case; everything else (an empty line too) is no. */
export function isYes(answer: string): boolean {
  return /^y(es)?$/i.test(answer.trim());
}

/** Asks on the terminal (the question on stderr, the answer from stdin); Ctrl-C and Ctrl-D answer no. */
export function askOnTerminal(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  return new Promise<boolean>((resolve) => {
    let answered = false;
    const answer = (yes: boolean): void => {
      if (answered) return;
      answered = true;
      rl.close();
      resolve(yes);
    };
    rl.on('SIGINT', () => {
      process.stderr.write('\n');
      answer(false);
    });
    rl.on('close', () => answer(false));
    rl.question(question, (text) => answer(isYes(text)));
  });
}
