import { CliError } from '../errors.js';

/** What readPassword reads from and prompts on: the process's stdin and stderr, or (tests) streams standing in for a terminal. */
export interface PasswordStreams {
  input: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  output: NodeJS.WritableStream;
}

/**
 * The password for `user create` and `user set-password`: typed at a prompt that does not
 * show it when stdin is a terminal, then typed again to confirm (a typo nobody can see
 * would otherwise become the password; two that differ are refused, PASSWORD_MISMATCH);
 * else read whole from stdin (`printf %s "$PASSWORD" | innsync …`), once, without its
 * final newline.
 */
export async function readPassword(streams: PasswordStreams = { input: process.stdin, output: process.stderr }): Promise<string> {
  const { input } = streams;
  if (!input.isTTY || !input.setRawMode) return readAll(input);
  const reader = new HiddenLineReader(streams);
  try {
    const first = await reader.prompt('Password: ');
    const second = await reader.prompt('Password again: ');
    if (first !== second) throw new CliError('PASSWORD_MISMATCH', 'the two passwords typed differ: run the command again and type the same password twice');
    return first;
  } finally {
    reader.close();
  }
}

async function readAll(input: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/**
 * Reads lines from a terminal in raw mode, echoing nothing; Ctrl-C aborts (exit 130),
 * backspace erases. What is typed ahead (both passwords in one read) is kept for the next
 * prompt, not lost.
 */
class HiddenLineReader {
  private typed = '';
  private readonly lines: string[] = [];
  private waiting: ((line: string) => void) | null = null;
  private readonly onData = (chunk: Buffer | string): void => {
    for (const ch of chunk.toString()) {
      if (ch === '\r' || ch === '\n' || ch === '\u0004') {
        this.lines.push(this.typed);
        this.typed = '';
      } else if (ch === '\u0003') {
        this.close();
        this.streams.output.write('\n');
        process.exit(130);
      } else if (ch === '\u007f' || ch === '\b') this.typed = this.typed.slice(0, -1);
      else this.typed += ch;
    }
    this.deliver();
  };

  /** The terminal closed: what was typed so far ends the line (as Ctrl-D does). */
  private readonly onEnd = (): void => {
    this.ended = true;
    this.onData('\u0004');
  };
  private ended = false;

  constructor(private readonly streams: PasswordStreams) {
    // Echo off before the first prompt shows: nothing typed after it is ever displayed.
    streams.input.setRawMode?.(true);
    streams.input.on('data', this.onData);
    streams.input.once('end', this.onEnd);
    streams.input.resume();
  }

  prompt(text: string): Promise<string> {
    this.streams.output.write(text);
    return new Promise((resolve) => {
      this.waiting = (line) => {
        this.streams.output.write('\n');
        resolve(line);
      };
      this.deliver();
    });
  }

  private deliver(): void {
    const line = this.lines.shift() ?? (this.ended ? '' : undefined);
    if (line === undefined || !this.waiting) {
      if (line !== undefined) this.lines.unshift(line);
      return;
    }
    const waiting = this.waiting;
    this.waiting = null;
    waiting(line);
  }

  close(): void {
    this.streams.input.off('data', this.onData);
    this.streams.input.off('end', this.onEnd);
    this.streams.input.setRawMode?.(false);
    this.streams.input.pause();
  }
}
