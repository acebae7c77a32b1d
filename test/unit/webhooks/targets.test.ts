import { describe, expect, it } from 'vitest'
import { classifyAddress, parseTargetUrl, resolveTarget, WebhookTargetError } from '../../../src/webhooks/targets.js'

const team = { allowPrivate: false }
const local = { allowPrivate: true }

describe('webhook targets', () => {
  it('classifies link-local, metadata, private, loopback and public addresses', () => {
    for (const a of ['169.254.169.254', '169.254.0.1', 'fd00:ec2::254', 'fe80::1', '0.0.0.0', '::', '224.0.0.1', '::ffff:169.254.169.254', '100.100.100.200']) expect(classifyAddress(a), a).toBe('forbidden')
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '::1', 'fd12::1', '100.64.0.1', '::ffff:10.0.0.1']) expect(classifyAddress(a), a).toBe('private')
    for (const a of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '172.32.0.1']) expect(classifyAddress(a), a).toBe('public')
  })

  it('accepts only http(s) URLs without credentials, naming the field and the fix', () => {
    expect(() => parseTargetUrl('ftp://example.com/x')).toThrow(/url: only http and https/)
    expect(() => parseTargetUrl('file:///etc/passwd')).toThrow(WebhookTargetError)
    expect(() => parseTargetUrl('not a url')).toThrow(/url: "not a url" is not a URL; give an http\(s\) URL/)
    expect(() => parseTargetUrl('https://u:p@example.com/')).toThrow(/user name or password/)
    expect(parseTargetUrl('https://hooks.example.com/x#frag').toString()).toBe('https://hooks.example.com/x')
  })

  it('refuses metadata addresses always and private ones in team mode, with the option to name', async () => {
    await expect(resolveTarget(new URL('http://169.254.169.254/latest'), local)).rejects.toThrow(/link-local, metadata.*never go there/)
    await expect(resolveTarget(new URL('http://[fd00:ec2::254]/'), local)).rejects.toThrow(WebhookTargetError)
    await expect(resolveTarget(new URL('http://10.0.0.5/'), team)).rejects.toThrow(/--webhooks-allow-private/)
    await expect(resolveTarget(new URL('http://127.0.0.1:9/'), local)).resolves.toEqual({ address: '127.0.0.1', family: 4 })
  })

  it('checks what a name resolves to now (DNS rebinding): any bad address refuses it', async () => {
    let answer = [{ address: '93.184.216.34', family: 4 as const }]
    const resolver = async () => answer
    const url = new URL('https://hooks.example.com/x')
    await expect(resolveTarget(url, team, resolver)).resolves.toEqual(answer[0])
    answer = [{ address: '93.184.216.34', family: 4 }, { address: '169.254.169.254', family: 4 }]
    await expect(resolveTarget(url, team, resolver)).rejects.toThrow(/hooks\.example\.com \(169\.254\.169\.254\)/)
    await expect(resolveTarget(url, team, async () => Promise.reject(new Error('ENOTFOUND')))).rejects.toThrow(/does not resolve/)
  })
})
