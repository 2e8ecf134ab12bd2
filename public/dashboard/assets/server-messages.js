// The server's refusals in the user's language, chosen by the answer's `code` (and a member
// the answer carries for the case), never by its English sentence (docs/dashboard.md,
// "Languages, dates and themes"). A code the dashboard does not expect shows the server's
// message as sent.

import { t, tk } from './i18n.js';

const BY_CODE = {
  HTTPS_REQUIRED: tk('This service is served over HTTPS only.'),
  ROOM_OCCUPIED: tk('The room is held by another active guest.'),
  VALIDATION_ERROR: tk('The request does not satisfy the field rules.'),
  INVALID_DATE_FORMAT: tk('The request does not satisfy the field rules.'),
  RATE_LIMITED: tk('Rate limit exceeded.'),
  NOT_AUTHENTICATED: tk('Log in to continue.'),
  LOGIN_FAILED: tk('E-mail or password is wrong.'),
  CSRF_REJECTED: tk("The request did not carry this session's CSRF token or came from another site."),
  FORBIDDEN: tk('Your role does not allow this.'),
  DISPLAY_READ_ONLY: tk('This is a front-desk display: it shows the board only. Log out and log in without display mode to make changes or open a guest.'),
  TOO_MANY_STREAMS: tk(
    'Too many live board connections are open for this account or hotel: close dashboard tabs and log out on screens no longer in use, then reload this page.',
  ),
  // A hotel exists already (the link is then dead for good), or the link is not this start's.
  SETUP_LINK_INVALID: (body) =>
    body.hotelExists
      ? tk('A hotel already exists, so the setup link no longer works: sign in, or ask an admin of your hotel for an account (operators: innsync user create).')
      : tk('This setup link is not the current one: open the link the server printed when it started (a new one at every start while no hotel exists).'),
  RECORD_NOT_FOUND: tk('Not found in your hotel.'),
  GUEST_MANAGED_BY_PMS: tk('This guest belongs to the PMS; change it there.'),
  CONFIRMATION_REQUIRED: tk(
    'Checking out a PMS guest here needs confirmation: the PMS will send the guest again on its next sync unless it is checked out there too.',
  ),
  HOTEL_CHOICE_REQUIRED: tk(
    'This e-mail and password open accounts at more than one hotel: log in again naming one of the listed hotels (its slug as "hotel").',
  ),
  EMAIL_TAKEN: tk('This hotel already has a user with this e-mail.'),
  GUEST_ACTIVE: tk('This guest is still checked in: check the guest out first, then erase the personal data.'),
  ENDPOINT_DISABLED: tk('This webhook endpoint is disabled: Enable it first; its waiting events are then sent in order.'),
  TOO_MANY_ENDPOINTS: tk(
    'This hotel already has as many webhook endpoints as allowed: remove one it no longer needs (or send several event types to one endpoint), or ask the operator to raise WEBHOOK_MAX_ENDPOINTS_PER_HOTEL.',
  ),
  KEY_PAIR_LIMIT: tk('This hotel already has as many active key pairs as allowed. Revoke a key pair it no longer uses, then issue a new one.'),
  ROOM_EXISTS: tk('This room is already on the room list: edit that room instead, or choose another room number.'),
  ROOM_LIST_FULL: tk('The room list holds as many rooms as allowed (5,000): remove rooms that are not rooms of this hotel, then add again.'),
  ROOM_LIST_INVALID: tk(
    'The room list CSV has problems on the lines listed in errors: fix each as its message says and import it again; nothing was imported.',
  ),
  ROOM_CSV_TOO_LARGE: tk(
    'The room list CSV is larger than 512 KiB: keep only the columns room, floor, type and out_of_order_reason and one line per room, then import it again.',
  ),
  PASSWORD_INCORRECT: tk('The password entered is not the password of your account: type your current password again.'),
  PASSKEY_SESSION_REQUIRED: tk(
    'Only a session signed in with a passkey can turn off "sign in with passkeys only": log out, sign in with your passkey, then turn it off.',
  ),
  PASSKEY_INVALID: tk('The passkey could not be verified: use a passkey registered for this account on this site, then try again.'),
  PASSKEY_CHALLENGE_EXPIRED: tk('The passkey request expired or was already used: start again (a passkey must answer within 5 minutes, once).'),
  PASSKEY_REQUIRED: tk('Add a passkey first: "sign in with passkeys only" needs at least one passkey on your account.'),
  LAST_PASSKEY: tk('This is your last passkey and your account signs in with passkeys only: turn passkeys-only off first, or add another passkey.'),
  CANNOT_DEACTIVATE_SELF: tk('You cannot deactivate your own account.'),
  CANNOT_CHANGE_OWN_ROLE: tk('You cannot change your own role: ask another admin of your hotel to change it.'),
  USER_DEACTIVATED: tk('This user is deactivated, so their role cannot be changed: reload the Staff page to see who is active.'),
  LAST_ADMIN: tk("This is the hotel's last active admin: make another user admin first, then change this user's role."),
  SECOND_FACTOR_REQUIRED: tk('This sign-in needs its second factor first: enter the code of your authenticator app, or one of your recovery codes.'),
  SECOND_FACTOR_INVALID: tk(
    'This code is wrong or was already used: enter the code your authenticator app shows now (a code works once), or an unused recovery code.',
  ),
  ENROLMENT_REQUIRED: tk('Your hotel requires a second factor: set up an authenticator app or add a passkey on the My account page to continue.'),
  FACTOR_STATE_CONFLICT: tk('Your authenticator app is not in the state this step needs: reload the My account page and start again from what it shows.'),
  PAIRING_CODE_INVALID: tk('This pairing code is wrong, used or expired: ask an admin for a new one (Staff page, Pair a display) and sign in again with it.'),
  INTERNAL_ERROR: tk('An internal error occurred. It has been logged; quote the requestId when reporting it.'),
  SERVICE_UNAVAILABLE: tk('Storage is unreachable; retry in a few seconds.'),
  NETWORK_ERROR: tk('The server cannot be reached. Check the connection and try again.'),
};

/**
 * The codes the dashboard words itself (test/dashboard/i18n.test.ts holds them to the registry).
 * @public
 */
export const KNOWN_CODES = Object.keys(BY_CODE);

/** An error answer's sentence in the user's language: by its code, else as the server sent it. */
export function serverMessage(body) {
  const text = BY_CODE[body.code];
  if (!text) return body.message;
  return t(typeof text === 'function' ? text(body) : text);
}
