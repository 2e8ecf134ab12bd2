// The server's error messages the dashboard may show, as the server words them in English
// (src/errors.ts; test/dashboard/i18n.test.ts holds them equal), so each is translated like
// any other text. A message the server words for the case (naming a room, a count) is
// shown as sent.

import { t, tk } from './i18n.js';

const MESSAGES = [
  tk('This service is served over HTTPS only.'),
  tk('The room is held by another active guest.'),
  tk('The request does not satisfy the field rules.'),
  tk('Rate limit exceeded.'),
  tk('Log in to continue.'),
  tk('E-mail or password is wrong.'),
  tk("The request did not carry this session's CSRF token or came from another site."),
  tk('Your role does not allow this.'),
  tk('This is a front-desk display: it shows the board only. Log out and log in without display mode to make changes or open a guest.'),
  tk(
    'Too many live board connections are open for this account or hotel: close dashboard tabs and log out on screens no longer in use, then reload this page.',
  ),
  tk('This setup link is not the current one: open the link the server printed when it started (a new one at every start while no hotel exists).'),
  tk('A hotel already exists, so the setup link no longer works: sign in, or ask an admin of your hotel for an account (operators: innsync user create).'),
  tk('Not found in your hotel.'),
  tk('No guest with this id in your hotel.'),
  tk('This guest belongs to the PMS; change it there.'),
  tk('Checking out a PMS guest here needs confirmation: the PMS will send the guest again on its next sync unless it is checked out there too.'),
  tk('This e-mail and password open accounts at more than one hotel: log in again naming one of the listed hotels (its slug as "hotel").'),
  tk('This hotel already has a user with this e-mail.'),
  tk('This guest is still checked in: check the guest out first, then erase the personal data.'),
  tk('This webhook endpoint is disabled: Enable it first; its waiting events are then sent in order.'),
  tk(
    'This hotel already has as many webhook endpoints as allowed: remove one it no longer needs (or send several event types to one endpoint), or ask the operator to raise WEBHOOK_MAX_ENDPOINTS_PER_HOTEL.',
  ),
  tk('This hotel already has as many active key pairs as allowed. Revoke a key pair it no longer uses, then issue a new one.'),
  tk('This room is already on the room list: edit that room instead, or choose another room number.'),
  tk('The room list holds as many rooms as allowed (5,000): remove rooms that are not rooms of this hotel, then add again.'),
  tk('The room list CSV has problems on the lines listed in errors: fix each as its message says and import it again; nothing was imported.'),
  tk('The room list CSV is larger than 512 KiB: keep only the columns room, floor, type and out_of_order_reason and one line per room, then import it again.'),
  tk('You cannot deactivate your own account.'),
  // A webhook endpoint's URL refused (the field error's sentence after "url: ").
  tk('The URL must be at most 2,000 characters.'),
  tk('The URL is not a valid absolute URL; use https://host/path.'),
  tk('The URL must not carry a user name or password; authenticate the signature instead.'),
  tk('The URL must start with https:// or http://.'),
  tk('The URL must start with https:// (plain http:// needs WEBHOOK_ALLOW_PRIVATE_NETWORKS=true).'),
  tk('The URL points into a private or local network; use a public address (or set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true).'),
  tk('An internal error occurred. It has been logged; quote the requestId when reporting it.'),
  tk('Storage is unreachable; retry in a few seconds.'),
];

export const SERVER_MESSAGES = new Set(MESSAGES);

/** The server's message in the user's language when it is one of the known ones. */
export const serverMessage = (message) => (SERVER_MESSAGES.has(message) ? t(message) : message);
