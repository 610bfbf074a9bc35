import { checkWebhookTarget, isPublicAddress, publicOnlyLookup, refusedAddressReason } from './ssrf';

// [address, callable by default, callable with WEBHOOK_ALLOW_PRIVATE=true]
const TABLE: [string, boolean, boolean][] = [
  ['8.8.8.8', true, true],
  ['2606:4700:4700::1111', true, true],
  ['10.0.0.1', false, true],
  ['192.168.0.1', false, true],
  ['127.0.0.1', false, true],
  ['::1', false, true],
  ['100.64.0.1', false, true],
  ['fd12:3456::1', false, true],
  // IPv4-compatible (::a.b.c.d; the URL parser writes [::127.0.0.1] as [::7f00:1])
  ['::7f00:1', false, true],
  ['::127.0.0.1', false, true],
  ['::a9fe:a9fe', false, false],
  ['::808:808', true, true],
  // IPv4-mapped and IPv4-translated
  ['::ffff:127.0.0.1', false, true],
  ['::ffff:a9fe:a9fe', false, false],
  ['::ffff:8.8.8.8', true, true],
  ['::ffff:0:7f00:1', false, true],
  // NAT64 (64:ff9b::/96) and local-use NAT64 (64:ff9b:1::/48)
  ['64:ff9b::a00:1', false, true],
  ['64:ff9b::169.254.169.254', false, false],
  ['64:ff9b::808:808', true, true],
  ['64:ff9b:1::808:808', false, false],
  // 6to4: the relay address is in bits 16..48
  ['2002:7f00:1::1', false, true],
  ['2002:a9fe:a9fe::1', false, false],
  ['2002:808:808::1', true, true],
  // Teredo: server 65.54.227.120, client stored inverted (~ 192.0.2.45 / 127.0.0.1)
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', false, false],
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', false, true],
  ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', true, true],
  // Link-local and cloud metadata: refused whatever WEBHOOK_ALLOW_PRIVATE says
  ['169.254.169.254', false, false],
  ['169.254.170.2', false, false],
  ['169.254.0.1', false, false],
  ['fe80::1', false, false],
  ['fd00:ec2::254', false, false],
  ['100.100.100.200', false, false],
  ['168.63.129.16', false, false],
  ['192.0.0.192', false, false],
  // Never callable
  ['0.0.0.0', false, false],
  ['::', false, false],
  ['224.0.0.251', false, false],
  ['255.255.255.255', false, false],
  ['ff02::1', false, false],
  ['192.0.2.1', false, false],
  ['2001:db8::1', false, false],
  ['240.0.0.1', false, false],
  ['not an ip', false, false],
];

describe('SSRF address policy', () => {
  it.each(TABLE)('%s: default %s, with WEBHOOK_ALLOW_PRIVATE %s', (address, byDefault, withPrivate) => {
    expect(refusedAddressReason(address, { allowPrivate: false }) === null).toBe(byDefault);
    expect(isPublicAddress(address)).toBe(byDefault);
    expect(refusedAddressReason(address, { allowPrivate: true }) === null).toBe(withPrivate);
  });

  it('judges URLs as the URL parser writes them', async () => {
    for (const url of [
      'http://[::127.0.0.1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[64:ff9b::127.0.0.1]/',
      'http://0x7f.1/',
      'http://2130706433/',
    ]) {
      expect([url, (await checkWebhookTarget(url, { allowPrivate: false })).ok]).toEqual([url, false]);
    }
  });

  it('refuses metadata URLs when private addresses are allowed, at creation and at delivery', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/',
      'http://100.100.100.200/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/',
    ]) {
      expect([url, (await checkWebhookTarget(url, { allowPrivate: true })).ok]).toEqual([url, false]);
    }
    expect(
      (await checkWebhookTarget('http://metadata.example/', { allowPrivate: true, resolveHost: async () => ['169.254.169.254'] })).ok,
    ).toBe(false);
    expect((await checkWebhookTarget('http://127.0.0.1:8080/hook', { allowPrivate: true })).ok).toBe(true);
    const err = await new Promise<Error | null>((resolve) =>
      publicOnlyLookup(async () => ['169.254.169.254'], { allowPrivate: true })('rebinds.example', {}, (e) => resolve(e)),
    );
    expect(err?.message).toMatch(/rebinds\.example resolves to 169\.254\.169\.254: .*not a public address \(linkLocal\)/);
  });
});
