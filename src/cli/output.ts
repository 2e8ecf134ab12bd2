/** Whether the command was asked for JSON (`--json`). */
export type JsonFlag = () => boolean;

/** One JSON object (with `--json`) or the text for a person, on stdout. */
export function print(json: boolean, object: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(object)}\n` : `${text}\n`);
}
