/**
 * The PostgreSQL adapter's LISTEN connection: one dedicated client that hears every commit's
 * NOTIFY (the new head rev), re-established with backoff when it is lost; while it is down the
 * adapter polls, and once it is back it asks for one catch-up (whatever was written meanwhile).
 */
import pg from 'pg'
import { describePg } from './connection.js'
import { quoteIdent } from './migrations.js'

export interface ListenerOptions {
  url: string
  channel: string
  pollIntervalMs: number
  connectTimeoutMs: number
  isNew: (rev: number) => boolean
  onChange: () => void
  onError: (error: unknown) => void
  location: string
}

/** One LISTEN connection, re-established with backoff; polls while it is down. */
export class Listener {
  listening = false
  pid: number | undefined
  private client: pg.Client | null = null
  private stopped = false
  private retryTimer: NodeJS.Timeout | null = null
  private pollTimer: NodeJS.Timeout | null = null
  private attempt = 0

  constructor(private readonly o: ListenerOptions) {}

  start(): void {
    void this.connect()
  }

  stop(): void {
    this.stopped = true
    this.listening = false
    if (this.retryTimer) clearTimeout(this.retryTimer)
    this.stopPolling()
    const client = this.client
    this.client = null
    if (client) void client.end().catch(() => {})
  }

  private async connect(): Promise<void> {
    if (this.stopped) return
    const client = new pg.Client({ connectionString: this.o.url, connectionTimeoutMillis: this.o.connectTimeoutMs, keepAlive: true })
    this.client = client
    let lost = false
    const onLost = (e?: unknown): void => {
      if (lost || this.stopped) return
      lost = true
      this.listening = false
      this.pid = undefined
      if (e !== undefined && this.attempt === 0) this.o.onError(new Error(`${this.o.location}: lost the LISTEN connection (${describePg(e)}); polling until it is back`))
      void client.end().catch(() => {})
      this.startPolling()
      this.scheduleReconnect()
    }
    client.on('error', onLost)
    client.on('end', () => onLost())
    client.on('notification', (n) => {
      const rev = Number(n.payload)
      if (!Number.isFinite(rev) || this.o.isNew(rev)) this.o.onChange()
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${quoteIdent(this.o.channel)}`)
      const pid = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
      if (this.stopped) {
        void client.end().catch(() => {})
        return
      }
      this.pid = pid.rows[0]?.pid
      this.listening = true
      this.attempt = 0
      this.stopPolling()
      // Whatever was written while we were not listening.
      this.o.onChange()
    } catch (e) {
      onLost(e)
    }
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retryTimer) return
    const delay = Math.min(5000, 100 * 2 ** Math.min(this.attempt, 6))
    this.attempt++
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null
      void this.connect()
    }, delay)
    this.retryTimer.unref()
  }

  private startPolling(): void {
    if (this.pollTimer || this.o.pollIntervalMs <= 0 || this.stopped) return
    this.pollTimer = setInterval(() => this.o.onChange(), this.o.pollIntervalMs)
    this.pollTimer.unref()
  }

  private stopPolling(): void {
    if (this.pollTimer) clearInterval(this.pollTimer)
    this.pollTimer = null
  }
}
