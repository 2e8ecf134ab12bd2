import type { ZxcvbnFactory, ZxcvbnResult } from '@zxcvbn-ts/core';
import { fieldError, PASSWORD_REFUSALS, validationError, type ApiError } from '../errors.js';

// docs/dashboard.md, "Passwords": a staff password is refused when it is easy to guess:
// one of the common passwords, the user's e-mail or the hotel's name in it, or too weak
// by the zxcvbn estimate. Checked on the server only, offline, wherever a password is set.

type PasswordProblem = keyof typeof PASSWORD_REFUSALS;

/** zxcvbn's score from 0 to 4; 3 and up ("safely unguessable", at least 10^8 guesses) is accepted. */
const MIN_SCORE = 3;
/**
 * Only the first this many characters are estimated: the estimate's cost grows fast with
 * length (a 200-character password could take seconds), and more characters than these
 * only make a password stronger.
 */
const ESTIMATED_CHARS = 64;
/** Parts of the e-mail or hotel name shorter than this are not looked for in a password. */
const MIN_PART = 3;

/** The dictionaries of the other languages the dashboard speaks: words, names, Wikipedia's vocabulary. */
const OTHER_LANGUAGE_LISTS = ['commonWords', 'firstnames', 'lastnames', 'wikipedia'];

let estimator: Promise<ZxcvbnFactory> | null = null;

/** zxcvbn with its dictionaries, made once per process on first use (they are large). */
function zxcvbn(): Promise<ZxcvbnFactory> {
  estimator ??= (async () => {
    const [{ ZxcvbnFactory: Factory }, common, en, de, fr, es] = await Promise.all([
      import('@zxcvbn-ts/core'),
      import('@zxcvbn-ts/language-common'),
      import('@zxcvbn-ts/language-en'),
      import('@zxcvbn-ts/language-de'),
      import('@zxcvbn-ts/language-fr'),
      import('@zxcvbn-ts/language-es-es'),
    ]);
    const others: Record<string, string[]> = {};
    for (const [lang, pack] of [
      ['de', de.dictionary],
      ['fr', fr.dictionary],
      ['es', es.dictionary],
    ] as const)
      for (const [name, words] of Object.entries(pack as Record<string, string[]>))
        if (OTHER_LANGUAGE_LISTS.includes(name.split('-')[0] ?? '')) others[`${name.split('-')[0]}-${lang}`] = words;
    return new Factory({
      dictionary: { ...common.dictionary, ...en.dictionary, ...others },
      graphs: common.adjacencyGraphs,
      // Bounds the l33t variants tried (P@55w0rd): enough for real passwords, cheap for odd ones.
      l33tMaxSubstitutions: 10,
    });
  })();
  return estimator;
}

/** Letters and digits only, in lower case: "Grand Hotel" and "grand-hotel" compare alike. */
const compact = (text: string): string =>
  text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');

/** A name's parts worth looking for: the whole (compacted) and its words. */
function parts(text: string): string[] {
  const words = text
    .normalize('NFKC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u);
  return [...new Set([compact(text), ...words])].filter((p) => p.length >= MIN_PART);
}

/** Whether the password holds this whole (compacted) name. */
function holds(password: string, name: string): boolean {
  const whole = compact(name);
  return whole.length >= MIN_PART && compact(password).includes(whole);
}

/** Fewer letters and digits than this left once a name's words are taken out: the password is that name dressed up. */
const MIN_OWN_CHARS = 8;

/**
 * Whether the password is mostly this name's words: taken out of it (longest first), fewer
 * than MIN_OWN_CHARS letters and digits remain ("HarbourView2024" for "Harbour View Inn").
 */
function mostlyOf(password: string, name: string): boolean {
  const words = parts(name).sort((a, b) => b.length - a.length);
  let rest = compact(password);
  for (const w of words) rest = rest.split(w).join('');
  return rest.length < compact(password).length && rest.length < MIN_OWN_CHARS;
}

/** Why a weak estimate is weak: a part of the e-mail or the hotel name, a common password, or neither. */
function reason(result: ZxcvbnResult, emailParts: string[]): PasswordProblem {
  const words = result.sequence.filter((m) => m.pattern === 'dictionary').map((m) => ({ list: String(m.dictionaryName), word: String(m.matchedWord) }));
  const personal = words.find((w) => w.list === 'userInputs');
  if (personal) return emailParts.includes(personal.word) ? 'PASSWORD_LIKE_EMAIL' : 'PASSWORD_LIKE_HOTEL';
  return words.some((w) => w.list === 'passwords-common') ? 'PASSWORD_TOO_COMMON' : 'PASSWORD_TOO_WEAK';
}

/**
 * What makes this password easy to guess, or null. In this order: it holds the e-mail's
 * local part, or the hotel's name, or is mostly their words; zxcvbn scores it under MIN_SCORE, knowing the e-mail's
 * and the hotel name's parts: then the part or common password it found, else too weak.
 */
async function passwordProblem(password: string, context: { email: string; hotelName: string }): Promise<PasswordProblem | null> {
  const local = context.email.split('@')[0] ?? '';
  if (holds(password, local) || mostlyOf(password, local)) return 'PASSWORD_LIKE_EMAIL';
  if (holds(password, context.hotelName) || mostlyOf(password, context.hotelName)) return 'PASSWORD_LIKE_HOTEL';
  const emailParts = parts(local);
  const result = (await zxcvbn()).check([...password].slice(0, ESTIMATED_CHARS).join(''), [...emailParts, ...parts(context.hotelName)]);
  return result.score >= MIN_SCORE ? null : reason(result, emailParts);
}

/** The 422 of a refused password, naming the form's field (`password`, `newPassword`). */
function weakPasswordError(problem: PasswordProblem, field = 'password'): ApiError {
  return validationError([fieldError(field, problem, PASSWORD_REFUSALS[problem])]);
}

/** Refuses (422) a password passwordProblem finds easy to guess. */
export async function requireStrongPassword(password: string, context: { email: string; hotelName: string }, field = 'password'): Promise<void> {
  const problem = await passwordProblem(password, context);
  if (problem !== null) throw weakPasswordError(problem, field);
}
