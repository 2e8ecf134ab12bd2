import { describe, expect, it } from 'vitest';
import { checkStaffAccount, isStaffPassword } from '../../src/domain/accounts.js';

// docs/dashboard.md, "Staff accounts and login": one set of rules for a new staff account,
// whether the dashboard's Staff page or `innsync user create` makes it.
describe('a new staff account (domain/accounts.ts)', () => {
  const ok = { email: ' Front.Desk+1@Hotel.example ', role: 'receptionist', password: 'long enough password' };

  it('is stored with its e-mail trimmed and in lower case', () => {
    expect(checkStaffAccount(ok)).toEqual({ ok: true, email: 'front.desk+1@hotel.example', role: 'receptionist' });
  });

  it('names the first rule it breaks: the role, then the e-mail, then the password', () => {
    expect(checkStaffAccount({ email: 'x', role: 'manager', password: 'short' })).toEqual({ ok: false, problem: 'role' });
    for (const email of [
      'not-an-email',
      'desk@hotel..example',
      'dësk@hotel.example',
      `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.example`,
    ]) {
      expect(checkStaffAccount({ ...ok, email, password: 'short' })).toEqual({ ok: false, problem: 'email' });
    }
    expect(checkStaffAccount({ ...ok, password: 'short' })).toEqual({ ok: false, problem: 'password' });
  });

  it('counts a password in characters (code points), as the dashboard schemas count a length', () => {
    expect(isStaffPassword('123456789')).toBe(false);
    expect(isStaffPassword('1234567890')).toBe(true);
    expect(isStaffPassword('🔑'.repeat(9))).toBe(false);
    expect(isStaffPassword('🔑'.repeat(200))).toBe(true);
    expect(isStaffPassword('x'.repeat(201))).toBe(false);
  });
});
