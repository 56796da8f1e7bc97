import t from 'tap';
import { EgressDeniedError, EgressPolicy } from '../../src/upstream/egress.js';
import { SvcError } from '../../src/lib/errors.js';

const ALLOW = ['api.openai.com', '.openai.azure.com', '10.0.0.0/8', '2001:db8::/32', '192.168.1.7', '::1'];
const enforce = new EgressPolicy('enforce', ALLOW);
const allowed = (host: string) => enforce.check(host).allowed;

t.test('an exact host matches itself only', async (t) => {
  t.ok(allowed('api.openai.com'));
  t.notOk(allowed('openai.com'), 'not its parent');
  t.notOk(allowed('x.api.openai.com'), 'not its subdomains');
  t.notOk(allowed('api.openai.com.evil.net'));
});

t.test('a .suffix matches the bare domain and every subdomain, not a look-alike', async (t) => {
  t.ok(allowed('openai.azure.com'), 'the bare domain');
  t.ok(allowed('mytenant.openai.azure.com'));
  t.ok(allowed('a.b.openai.azure.com'));
  t.notOk(allowed('evilopenai.azure.com'), 'a label that only ends with the suffix');
  t.notOk(allowed('openai.azure.com.evil.net'));
  t.notOk(allowed('azure.com'));
  const suffix = new EgressPolicy('enforce', ['.openai.com']);
  t.notOk(suffix.check('evilopenai.com').allowed);
  t.ok(suffix.check('api.openai.com').allowed);
});

t.test('case and trailing dots are ignored, on hosts and on entries', async (t) => {
  t.ok(allowed('API.OpenAI.com'));
  t.ok(allowed('api.openai.com.'));
  t.ok(allowed('Tenant.OPENAI.Azure.com..'));
  t.equal(enforce.check('API.OpenAI.com.').host, 'api.openai.com', 'the decision names the normalized host');
  const p = new EgressPolicy('enforce', ['API.Example.COM.', '.Example.ORG.']);
  t.same(p.invalid, []);
  t.ok(p.check('api.example.com').allowed);
  t.ok(p.check('www.example.org').allowed);
});

t.test('IPv4 CIDRs and addresses match IP-literal hosts', async (t) => {
  t.ok(allowed('10.0.0.1'));
  t.ok(allowed('10.255.255.255'));
  t.notOk(allowed('11.0.0.1'));
  t.ok(allowed('192.168.1.7'), 'a single address');
  t.notOk(allowed('192.168.1.8'));
  t.ok(allowed('[::ffff:a00:1]'), 'an IPv4-mapped IPv6 literal (as URL writes it) matches the IPv4 range');
  t.notOk(new EgressPolicy('enforce', ['10.0.0.0/8']).check('10.example.com').allowed, 'a name that looks numeric is not an IP');
});

t.test('IPv6 CIDRs and addresses, with or without brackets', async (t) => {
  t.ok(allowed('2001:db8::1'));
  t.ok(allowed('[2001:db8:ffff::1]'));
  t.ok(allowed('2001:DB8::abcd'), 'case');
  t.notOk(allowed('2001:db9::1'));
  t.ok(allowed('[::1]'));
  t.ok(allowed('0:0:0:0:0:0:0:1'), 'another spelling of the same address');
  t.notOk(allowed('::2'));
  t.equal(enforce.check('[2001:db8::1]').host, '2001:db8::1');
  const bracketed = new EgressPolicy('enforce', ['[2001:db8::]/32', '[fe80::1]']);
  t.same(bracketed.invalid, []);
  t.ok(bracketed.check('2001:db8::5').allowed);
  t.ok(bracketed.check('[fe80::1]').allowed);
});

t.test('a host name entry does not match an IP host, nor a CIDR a name', async (t) => {
  const p = new EgressPolicy('enforce', ['10.0.0.0/8', 'localhost']);
  t.notOk(p.check('127.0.0.1').allowed);
  t.ok(p.check('localhost').allowed);
});

t.test('invalid entries are ignored and reported', async (t) => {
  const bad = [
    'api.openai.com:443',
    'https://api.openai.com',
    '*.openai.com',
    '..openai.com',
    '.',
    'a b.com',
    '-bad.com',
    'x..com',
    `${'a'.repeat(64)}.com`,
    '10.0.0.0/33',
    '2001:db8::/129',
    '10.0.0.0/',
    '10.0.0.0/8/8',
    '10.0.0/8',
    'not-an-ip/8',
    '10.0.0.0/-1',
  ];
  const p = new EgressPolicy('enforce', [...bad, 'ok.example.com']);
  t.same(p.invalid, bad);
  t.ok(p.check('ok.example.com').allowed, 'the valid entries still apply');
  t.notOk(p.check('api.openai.com').allowed);
  t.notOk(p.check('').allowed, 'an empty host is never allowed');
});

t.test('modes', async (t) => {
  const off = new EgressPolicy('off', []);
  t.same(off.check('anything.example'), { allowed: true, mode: 'off', host: 'anything.example' });
  t.equal(new EgressPolicy(undefined, []).mode, 'off', 'absent reads as off');
  t.ok(new EgressPolicy(undefined, []).check('x.example').allowed);
  const monitor = new EgressPolicy('monitor', ['api.openai.com']);
  t.same(monitor.check('evil.example'), { allowed: false, mode: 'monitor', host: 'evil.example' }, 'monitor reports; the caller logs');
  t.same(monitor.check('api.openai.com'), { allowed: true, mode: 'monitor', host: 'api.openai.com' });
  t.same(enforce.check('evil.example'), { allowed: false, mode: 'enforce', host: 'evil.example' });
  t.notOk(new EgressPolicy('enforce', []).check('api.openai.com').allowed, 'an empty list under enforce allows nothing');
});

t.test('EgressDeniedError is a 403 permission_error naming the host', async (t) => {
  const err = new EgressDeniedError('evil.example');
  t.ok(err instanceof SvcError);
  t.equal(err.status, 403);
  t.equal(err.code, 'egress_denied');
  t.equal(err.type, 'permission_error');
  t.match(err.message, /evil\.example/);
  t.equal(err.name, 'EgressDeniedError');
});

t.test('a host of many dots is read in linear time', async (t) => {
  // `/\.+$/` was tried at every dot of a run: a million dots before a letter took it minutes.
  const policy = new EgressPolicy('enforce', ['api.openai.com']);
  t.equal(policy.check(`${'.'.repeat(1_000_000)}x`).allowed, false);
  t.equal(policy.check('api.openai.com...').allowed, true);
});
