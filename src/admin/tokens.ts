import type { Db } from '../db/database.js';
import * as repo from '../db/repositories/operator.repository.js';
import { sha256Hex } from '../domain/ids.js';
import { CliError } from '../errors.js';
import { newOperatorToken } from '../keys/key-format.js';

// `innsync operator …` (README.md, "Operating it"; docs/admin-api.md, "Operator tokens").

/** A name says what the token is for: 1 to 100 characters. */
const NAME_MAX = 100;

/** A new token, its plain text returned this once; only its SHA-256 is kept. */
export async function createOperatorToken(db: Db, name: string): Promise<{ tokenId: string; name: string; token: string }> {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > NAME_MAX)
    throw new CliError('INVALID_ARGUMENT', `--name must be 1 to ${NAME_MAX} characters saying what the token is for`);
  const token = newOperatorToken();
  const tokenId = await repo.insertToken(db, trimmed, sha256Hex(token), new Date().toISOString());
  return { tokenId, name: trimmed, token };
}

export const listOperatorTokens = (db: Db): Promise<repo.OperatorToken[]> => repo.listTokens(db);

/** Revokes the token at once: its next request is refused. */
export async function revokeOperatorToken(db: Db, tokenId: string): Promise<{ tokenId: string; revoked: true }> {
  if (!(await repo.revokeToken(db, tokenId, new Date().toISOString())))
    throw new CliError('OPERATOR_TOKEN_NOT_FOUND', `no operator token with id "${tokenId}": innsync operator token list shows the tokens`);
  return { tokenId, revoked: true };
}

export const latestOperatorRequests = (db: Db, limit: number): Promise<repo.OperatorRequest[]> => repo.latestOperatorRequests(db, limit);
