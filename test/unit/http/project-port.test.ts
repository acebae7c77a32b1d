/**
 * A project's own port: derived from its path (stable, in 4849–5848, never 4848), recorded in
 * `.marginalia/port` once its server started there, and that file read as untrusted input — a
 * link, garbage, a privileged or huge port, a big file are all ignored.
 */
import { describe, expect, it } from 'vitest'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { candidatePorts, derivedPort, FIRST_PROJECT_PORT, PROJECT_PORTS, projectPort, recordedPort, recordPort } from '../../../src/http/project-port.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { testDir } from '../../helpers/store.js'

const cleanups = useCleanups()

describe('project ports', () => {
  it('are derived from the project path: the same folder the same port, in the range, never 4848', () => {
    const ports = new Set<number>()
    for (let i = 0; i < 200; i++) {
      const p = derivedPort(`/home/me/projects/app-${i}`)
      expect(p).toBeGreaterThanOrEqual(FIRST_PROJECT_PORT)
      expect(p).toBeLessThan(FIRST_PROJECT_PORT + PROJECT_PORTS)
      ports.add(p)
    }
    expect(ports.size).toBeGreaterThan(150) // spread out: two projects rarely meet
    expect(derivedPort('/home/me/shop')).toBe(derivedPort('/home/me/shop/'))
    expect(candidatePorts('/home/me/shop')[0]).toBe(derivedPort('/home/me/shop'))
    expect(new Set(candidatePorts('/home/me/shop')).size).toBe(20)
  })

  it('a recorded port wins and is kept; a bad record is ignored', () => {
    const { dir } = testDir(cleanups, 'marginalia-port-')
    expect(projectPort(dir)).toBe(derivedPort(dir))
    recordPort(dir, 5123)
    expect(recordedPort(dir)).toBe(5123)
    expect(projectPort(dir)).toBe(5123)
    expect(candidatePorts(dir).slice(0, 2)).toEqual([5123, derivedPort(dir)])
    const file = path.join(dir, '.marginalia', 'port')
    for (const bad of ['80\n', '70000', 'abc', '5123; rm -rf /', '', ' '.repeat(100) + '5000']) {
      writeFileSync(file, bad)
      expect(recordedPort(dir), JSON.stringify(bad)).toBeUndefined()
    }
    // A link where the file should be is not followed.
    const { dir: other } = testDir(cleanups, 'marginalia-port-target-')
    writeFileSync(path.join(other, 'p'), '5200\n')
    const linked = testDir(cleanups, 'marginalia-port-link-').dir
    mkdirSync(path.join(linked, '.marginalia'))
    symlinkSync(path.join(other, 'p'), path.join(linked, '.marginalia', 'port'))
    expect(recordedPort(linked)).toBeUndefined()
    expect(projectPort(linked)).toBe(derivedPort(linked))
  })
})
