import { randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The first-run setup link (docs/dashboard.md): while the database holds no hotel, the
 * server prints a link with a random token that lets one newcomer create the first hotel
 * and its admin in the browser. The token lives only in this process and dies on use.
 */
export class SetupLink {
  private token: string | null = null;

  /** A new token; the previous one (if any) stops working. */
  issue(): string {
    this.token = randomBytes(24).toString('base64url');
    return this.token;
  }

  matches(given: string): boolean {
    if (this.token === null) return false;
    const a = Buffer.from(given);
    const b = Buffer.from(this.token);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  /** Takes the token if it matches: one caller wins, the link is dead for every later one. */
  take(given: string): boolean {
    if (!this.matches(given)) return false;
    this.token = null;
    return true;
  }

  /** Puts a taken token back (the setup it was taken for failed, e.g. a taken slug). */
  restore(token: string): void {
    this.token ??= token;
  }

  get active(): boolean {
    return this.token !== null;
  }
}
