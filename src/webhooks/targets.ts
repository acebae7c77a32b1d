/**
 * Where a webhook may go. Only http(s) URLs; never a link-local or cloud-metadata address
 * (169.254.0.0/16, fe80::/10, fd00:ec2::254 …), nor an unspecified, multicast or broadcast one;
 * private and loopback ranges only when the policy allows them (a loopback-bound local server,
 * or a team server started with `--webhooks-allow-private`).
 *
 * The check is made on the resolved address at delivery time, and the connection goes to that
 * very address (send.ts pins it), so a name that resolves to a public address when the endpoint
 * is added and to the metadata service later (DNS rebinding) is refused then.
 */
import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'

export interface TargetPolicy {
  /** Private (10/8, 172.16/12, 192.168/16, fc00::/7, 100.64/10) and loopback addresses allowed. */
  allowPrivate: boolean
}

/** A target refused: the message names the field and the fix. */
export class WebhookTargetError extends Error {
  readonly code = 'WEBHOOK_TARGET_REFUSED'
  readonly field = 'url'
}

const never = new BlockList()
never.addSubnet('0.0.0.0', 8, 'ipv4')
never.addSubnet('169.254.0.0', 16, 'ipv4')
never.addSubnet('224.0.0.0', 4, 'ipv4')
never.addSubnet('240.0.0.0', 4, 'ipv4')
never.addAddress('100.100.100.200', 'ipv4') // a cloud's metadata service outside link-local
never.addAddress('::', 'ipv6')
never.addSubnet('fe80::', 10, 'ipv6')
never.addSubnet('ff00::', 8, 'ipv6')
never.addAddress('fd00:ec2::254', 'ipv6')

const privateRanges = new BlockList()
for (const [net, bits] of [
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['198.18.0.0', 15],
] as const)
  privateRanges.addSubnet(net, bits, 'ipv4')
privateRanges.addAddress('::1', 'ipv6')
privateRanges.addSubnet('fc00::', 7, 'ipv6')

export type AddressClass = 'forbidden' | 'private' | 'public'

/** An IPv4-mapped IPv6 address (::ffff:10.0.0.1) as the IPv4 address it is. */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return { address: mapped[1]!, family: 'ipv4' }
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' }
}

/** Which kind of address this is, for the policy. */
export function classifyAddress(raw: string): AddressClass {
  const { address, family } = unmapped(raw)
  if (never.check(address, family)) return 'forbidden'
  if (privateRanges.check(address, family)) return 'private'
  return 'public'
}

/** The URL of a new endpoint, checked for its form: http(s), a host, no credentials. */
export function parseTargetUrl(raw: string): URL {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new WebhookTargetError(`url: "${raw.slice(0, 200)}" is not a URL; give an http(s) URL like https://hooks.example.com/marginalia`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookTargetError(`url: only http and https are delivered to (got ${url.protocol}); give an http(s) URL`)
  if (url.username !== '' || url.password !== '') throw new WebhookTargetError('url: must not carry a user name or password; the receiver verifies the signature instead')
  if (url.hash !== '') url.hash = ''
  return url
}

/** The refusal for an address the policy does not allow, naming the fix. */
function refusal(host: string, address: string, kind: AddressClass): WebhookTargetError {
  const where = host === address ? address : `${host} (${address})`
  if (kind === 'forbidden') return new WebhookTargetError(`url: ${where} is a link-local, metadata, multicast or unspecified address; webhooks never go there. Give a public http(s) address`)
  return new WebhookTargetError(`url: ${where} is a private or loopback address; a team server delivers there only when started with --webhooks-allow-private (a loopback-bound local server always may)`)
}

/** Check one resolved address against the policy; throws WebhookTargetError. */
function checkAddress(host: string, address: string, policy: TargetPolicy): void {
  const kind = classifyAddress(address)
  if (kind === 'forbidden' || (kind === 'private' && !policy.allowPrivate)) throw refusal(host, address, kind)
}

export interface ResolvedTarget {
  address: string
  family: 4 | 6
}

export type Resolver = (host: string) => Promise<ResolvedTarget[]>

const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))

/**
 * Resolve the URL's host now and check every address it names (one bad address refuses the
 * target: a resolver may hand any of them to the next lookup). The first is where to connect.
 */
export async function resolveTarget(url: URL, policy: TargetPolicy, resolver: Resolver = systemResolver): Promise<ResolvedTarget> {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const literal = isIP(host)
  let addresses: ResolvedTarget[]
  if (literal !== 0) addresses = [{ address: host, family: literal === 6 ? 6 : 4 }]
  else {
    try {
      addresses = await resolver(host)
    } catch (e) {
      throw new WebhookTargetError(`url: the host ${host} does not resolve (${e instanceof Error ? e.message : String(e)}); check the name`)
    }
  }
  if (addresses.length === 0) throw new WebhookTargetError(`url: the host ${host} resolves to no address; check the name`)
  for (const a of addresses) checkAddress(host, a.address, policy)
  return addresses[0]!
}
