/**
 * The password for `user create` and `user set-password`: typed at a prompt that does not
 * show it when stdin is a terminal, else read whole from stdin (`printf %s "$PASSWORD" |
 * innsync …`), without its final newline.
 */
export async function readPassword(): Promise<string> {
  return process.stdin.isTTY ? promptHidden('Password: ') : readAll();
}

async function readAll(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** Reads one line in raw mode, echoing nothing; Ctrl-C aborts (exit 130), backspace erases. */
function promptHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  // Echo off before the prompt shows: nothing typed after it is ever displayed.
  stdin.setRawMode(true);
  process.stderr.write(prompt);
  return new Promise((resolve) => {
    let typed = '';
    const done = (): void => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
    };
    const onData = (chunk: Buffer): void => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          done();
          resolve(typed);
          return;
        }
        if (ch === '\u0003') {
          done();
          process.exit(130);
        }
        if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1);
        else typed += ch;
      }
    };
    stdin.resume();
    stdin.on('data', onData);
  });
}
