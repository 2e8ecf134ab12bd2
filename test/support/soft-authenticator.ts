import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

// A passkey authenticator in software, for the HTTP tests of docs/dashboard.md "Passkeys":
// it answers the server's options as a browser and an authenticator would (packed into
// WebAuthn's JSON), with an ES256 key it keeps, so the server's verification runs on real
// signatures. The browser tests use Chromium's own virtual authenticator instead.

const sha256 = (data: Buffer | string): Buffer => createHash('sha256').update(data).digest();
const b64u = (data: Buffer | Uint8Array): string => Buffer.from(data).toString('base64url');

/** Authenticator data flags: user present, user verified, attested credential data. */
const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

export interface SoftPasskey {
  credentialId: Buffer;
  privateKey: KeyObject;
  userHandle: string;
  counter: number;
}

interface Options {
  challenge: string;
  rp?: { id?: string };
  rpId?: string;
  user?: { id: string };
}

function clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string): Buffer {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
}

function authData(rpId: string, flags: number, counter: number, attested = Buffer.alloc(0)): Buffer {
  const count = Buffer.alloc(4);
  count.writeUInt32BE(counter);
  return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, attested]);
}

/** navigator.credentials.create() for these options at `origin`: the new passkey and the credential's JSON. */
export function createCredential(options: Options, origin: string, { verified = true } = {}): { passkey: SoftPasskey; json: Record<string, unknown> } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const cose = isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x ?? '', 'base64url')],
      [-3, Buffer.from(jwk.y ?? '', 'base64url')],
    ]),
  );
  const credentialId = randomBytes(32);
  const idLength = Buffer.alloc(2);
  idLength.writeUInt16BE(credentialId.length);
  const attested = Buffer.concat([Buffer.alloc(16), idLength, credentialId, Buffer.from(cose)]);
  const data = authData(options.rp?.id ?? '', UP | (verified ? UV : 0) | AT, 0, attested);
  const attestationObject = isoCBOR.encode(
    new Map<string, unknown>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', data],
    ]) as never,
  );
  const json = {
    id: b64u(credentialId),
    rawId: b64u(credentialId),
    type: 'public-key',
    clientExtensionResults: {},
    response: {
      clientDataJSON: b64u(clientData('webauthn.create', options.challenge, origin)),
      attestationObject: b64u(attestationObject),
      transports: ['internal'],
    },
  };
  return { passkey: { credentialId, privateKey, userHandle: options.user?.id ?? '', counter: 0 }, json };
}

/** navigator.credentials.get() for these options at `origin` with this passkey: the assertion's JSON (the counter moves on). */
export function getAssertion(passkey: SoftPasskey, options: Options, origin: string, { verified = true } = {}): Record<string, unknown> {
  passkey.counter += 1;
  const data = authData(options.rpId ?? '', UP | (verified ? UV : 0), passkey.counter);
  const client = clientData('webauthn.get', options.challenge, origin);
  const signature = sign('sha256', Buffer.concat([data, sha256(client)]), passkey.privateKey);
  return {
    id: b64u(passkey.credentialId),
    rawId: b64u(passkey.credentialId),
    type: 'public-key',
    clientExtensionResults: {},
    response: { clientDataJSON: b64u(client), authenticatorData: b64u(data), signature: b64u(signature), userHandle: passkey.userHandle },
  };
}
