import { describe, expect, it } from 'vitest';
import { EntryGate } from '../../src/traffic/entry-gate.js';

const acme = [{ name: 'acme', weight: 1, users: 2 }];

describe('EntryGate per user', () => {
  it('gives two users of one tenant a burst each; per tenant, the second user is refused', () => {
    const perUser = new EntryGate(acme, { rps: 1, burst: 2, per: 'user' });
    expect([perUser.admit(0, 0, 0), perUser.admit(0, 0, 0), perUser.admit(0, 0, 0)]).toEqual([-1, -1, 1000]);
    expect([perUser.admit(0, 1, 0), perUser.admit(0, 1, 0), perUser.admit(0, 1, 0)]).toEqual([-1, -1, 1000]);

    const perTenant = new EntryGate(acme, { rps: 1, burst: 2, per: 'tenant' });
    expect([perTenant.admit(0, 0, 0), perTenant.admit(0, 0, 0)]).toEqual([-1, -1]);
    expect(perTenant.admit(0, 1, 0)).toBe(1000);
    expect(perTenant.admit(0, 1, 500)).toBe(500);
  });

  it("draws a task's user from its tenant's users by key: the same every time, spread over all of them", () => {
    const gate = new EntryGate(
      [
        { name: 'a', weight: 1, users: 4 },
        { name: 'b', weight: 1 },
      ],
      undefined,
    );
    const seen = [0, 0, 0, 0];
    for (let key = 0; key < 4000; key++) {
      const tenant = gate.tenantOf(key);
      const user = gate.userOf(key, tenant);
      expect(gate.userOf(key, tenant)).toBe(user);
      if (tenant === 1)
        expect(user).toBe(0); // one user by default
      else seen[user]++;
    }
    expect(seen.reduce((a, n) => a + n, 0)).toBeGreaterThan(1800);
    for (const n of seen) expect(n).toBeGreaterThan(400);
  });

  it('keeps per-user buckets for active users only, and a dropped one comes back full', () => {
    const gate = new EntryGate([{ name: 'a', weight: 1, users: 100_000 }], { rps: 100, burst: 1, per: 'user' });
    // Each user submits once, 1 ms apart; a bucket refills in 10 ms, so few are not full at a time.
    for (let u = 0; u < 20_000; u++) expect(gate.admit(0, u, u)).toBe(-1);
    expect(gate.userBucketCount).toBeLessThanOrEqual(1024);
    expect(gate.admit(0, 5, 20_000)).toBe(-1);
    expect(gate.admit(0, 5, 20_000)).toBe(10);
  });
});
