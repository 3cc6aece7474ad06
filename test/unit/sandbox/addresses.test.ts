import { describe, expect, it } from 'vitest';
import { decideAddresses, embeddedIPv4, isLocalAddress } from '../../../src/core/sandbox/addresses';

describe('the addresses a sandboxed name resolves to', () => {
  it('knows the addresses of this machine and of private networks, in IPv4 and IPv6, and IPv4 carried in IPv6', () => {
    for (const a of ['127.0.0.1', '127.0.1.1', '0.0.0.0', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::1', 'fc00::2', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::127.0.0.1', '64:ff9b::7f00:1', '64:ff9b::10.0.0.1', '2002:c0a8:101::1', 'FE80::1%eth0', 'not an address']) {
      expect(isLocalAddress(a), a).toBe(true);
    }
    for (const a of ['1.1.1.1', '8.8.8.8', '172.32.0.1', '203.0.113.5', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1']) expect(isLocalAddress(a), a).toBe(false);
    expect(embeddedIPv4('::ffff:192.168.0.1')).toBe('192.168.0.1');
    expect(embeddedIPv4('2606:4700::1')).toBeNull();
  });

  it('a local address passes only when it or the name is listed exactly; a denied address never; every address must pass', () => {
    const v4 = (address: string) => ({ address, family: 4 });
    expect(decideAddresses('vm', [v4('127.0.0.1')], ['*'], [])).toMatchObject({ allowed: false, reason: expect.stringContaining('vm resolves to 127.0.0.1') });
    expect(decideAddresses('vm', [v4('127.0.0.1')], ['*.vm', '*'], []).allowed).toBe(false);
    expect(decideAddresses('vm', [v4('127.0.0.1')], ['vm'], [])).toEqual({ allowed: true, address: '127.0.0.1', family: 4 });
    expect(decideAddresses('vm', [v4('127.0.0.1')], ['*', '127.0.0.1'], []).allowed).toBe(true);
    expect(decideAddresses('example.com', [v4('93.184.215.14'), v4('10.0.0.5')], ['*'], []).allowed).toBe(false);
    expect(decideAddresses('example.com', [v4('93.184.215.14')], ['*'], ['93.184.215.14'])).toMatchObject({ allowed: false, reason: expect.stringContaining('deniedDomains') });
    expect(decideAddresses('example.com', [{ address: '2606:2800::1', family: 6 }], ['*'], [])).toEqual({ allowed: true, address: '2606:2800::1', family: 6 });
    expect(decideAddresses('nowhere.test', [], ['*'], []).allowed).toBe(false);
  });
});
