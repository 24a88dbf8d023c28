import { expect } from 'chai';
import { hasRole, parseRole, requireRole, roleOf, ROLES } from '../../src/auth/roles';
import { isGatewayError } from '../../src/errors';

describe('roles (issue 43)', () => {
  it('rank admin > operator > viewer > account; the admin key is admin, any other key account', () => {
    expect(ROLES).to.deep.equal(['account', 'viewer', 'operator', 'admin']);
    expect(roleOf({ isAdmin: true })).to.equal('admin');
    expect(roleOf({ isAdmin: false })).to.equal('account');
    expect(roleOf({ isAdmin: false, role: 'viewer' })).to.equal('viewer');
    expect(hasRole({ isAdmin: false, role: 'operator' }, 'viewer')).to.equal(true);
    expect(hasRole({ isAdmin: false, role: 'operator' }, 'admin')).to.equal(false);
    expect(hasRole({ isAdmin: false, role: 'viewer' }, 'operator')).to.equal(false);
    expect(hasRole({ isAdmin: false }, 'account')).to.equal(true);
  });

  it('a missing role is a 403 role_required naming the role needed and the one held', () => {
    try {
      requireRole({ isAdmin: false, role: 'viewer' }, 'operator');
      expect.fail('should throw');
    } catch (e) {
      expect(isGatewayError(e) && e.status).to.equal(403);
      expect(isGatewayError(e) && e.code).to.equal('role_required');
      expect((e as Error).message).to.match(/'operator'.*'viewer'/);
    }
  });

  it('parses only the four names (own keys: no prototype names)', () => {
    expect(parseRole('operator')).to.equal('operator');
    for (const bad of ['constructor', '__proto__', 'toString', 'Admin', '', 3, null])
      expect(parseRole(bad)).to.equal(undefined);
  });
});
