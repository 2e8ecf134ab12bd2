// Passkeys in the browser (docs/dashboard.md, "Passkeys"): the server's options (WebAuthn's
// JSON form, binary members as base64url) handed to navigator.credentials, and the
// credential it gives back packed the same way for the server.

import { t } from './i18n.js';

function toBytes(base64url) {
  const base64 = base64url.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function toBase64url(buffer) {
  let binary = '';
  for (const byte of new Uint8Array(buffer)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const withIds = (list) => (list ?? []).map((c) => ({ ...c, id: toBytes(c.id) }));

/** A refusal of the browser or the authenticator, in the user's words. */
function browserRefusal(err) {
  const name = err?.name;
  if (name === 'NotAllowedError' || name === 'AbortError') return new Error(t('The passkey request was cancelled or timed out.'));
  if (name === 'InvalidStateError') return new Error(t('This device already holds a passkey for your account.'));
  if (name === 'SecurityError') return new Error(t('Passkeys work only when the dashboard is opened by its host name over HTTPS.'));
  return new Error(t('This browser cannot use passkeys here.'));
}

async function ask(method, publicKey) {
  if (!window.PublicKeyCredential || !navigator.credentials) throw browserRefusal(null);
  try {
    return await navigator.credentials[method]({ publicKey });
  } catch (err) {
    throw browserRefusal(err);
  }
}

/** The common members of a credential's JSON. */
function credentialJson(credential, response) {
  return {
    id: credential.id,
    rawId: toBase64url(credential.rawId),
    type: credential.type,
    ...(credential.authenticatorAttachment ? { authenticatorAttachment: credential.authenticatorAttachment } : {}),
    clientExtensionResults: credential.getClientExtensionResults?.() ?? {},
    response,
  };
}

/** A new passkey for the registration options the server gave: its credential, for POST /account/passkeys. */
export async function createPasskey(options) {
  const credential = await ask('create', {
    ...options,
    challenge: toBytes(options.challenge),
    user: { ...options.user, id: toBytes(options.user.id) },
    excludeCredentials: withIds(options.excludeCredentials),
  });
  const r = credential.response;
  return credentialJson(credential, {
    clientDataJSON: toBase64url(r.clientDataJSON),
    attestationObject: toBase64url(r.attestationObject),
    transports: r.getTransports?.() ?? [],
  });
}

/** A passkey's answer to the sign-in options the server gave, for POST /passkey-login. */
export async function getPasskey(options) {
  const credential = await ask('get', { ...options, challenge: toBytes(options.challenge), allowCredentials: withIds(options.allowCredentials) });
  const r = credential.response;
  return credentialJson(credential, {
    clientDataJSON: toBase64url(r.clientDataJSON),
    authenticatorData: toBase64url(r.authenticatorData),
    signature: toBase64url(r.signature),
    ...(r.userHandle ? { userHandle: toBase64url(r.userHandle) } : {}),
  });
}
