import { spawn } from 'node:child_process';
import { SERVER_BIN, serviceEnv, type InstanceStorage } from '../../test/support/drill-instance.js';

/**
 * Runs `innsync <args> --json` on `storage` as an operator does (README.md,
 * "Operating it"), with `input` on stdin (a password), and returns the one JSON object it prints.
 * Fails with the command's own one-line reason when it exits non-zero. `env` adds variables.
 */
export function innsync(storage: InstanceStorage, args: string[], input = '', env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SERVER_BIN, ...args, '--json'], { env: { ...serviceEnv(storage), ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve(JSON.parse(stdout) as Record<string, unknown>);
      else reject(new Error(`innsync ${args.join(' ')} exited ${String(code)}: ${stderr.trim()}`));
    });
    child.stdin.on('error', () => undefined); // the command may exit before reading stdin
    child.stdin.end(input);
  });
}
