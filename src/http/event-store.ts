/**
 * Resumable MCP streams (SEP-1699): the recent messages of each session's SSE streams, so a
 * client that loses a stream in the middle of a long call (a watch) reconnects with
 * Last-Event-ID and receives what it missed, instead of waiting for a result that never comes.
 * Bounded by bytes per session; the oldest messages go first.
 */
import type { EventId, EventStore, JSONRPCMessage, StreamId } from '@modelcontextprotocol/server'

const DEFAULT_EVENT_STORE_BYTES = 4 * 1024 * 1024

interface Stored {
  id: EventId
  streamId: StreamId
  message: JSONRPCMessage
  bytes: number
}

export class BoundedEventStore implements EventStore {
  private readonly events: Stored[] = []
  private bytes = 0
  private seq = 0

  constructor(private readonly maxBytes = DEFAULT_EVENT_STORE_BYTES) {}

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    // Ids sort in store order within a session: the stream id, then a fixed-width counter.
    const id = `${streamId}_${(++this.seq).toString(36).padStart(10, '0')}`
    const bytes = JSON.stringify(message).length
    this.events.push({ id, streamId, message, bytes })
    this.bytes += bytes
    while (this.bytes > this.maxBytes && this.events.length > 1) this.bytes -= this.events.shift()!.bytes
    return id
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return this.events.find((e) => e.id === eventId)?.streamId ?? streamOf(eventId)
  }

  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const streamId = streamOf(lastEventId)
    if (streamId === undefined) throw new Error(`Last-Event-ID "${lastEventId}" is not one this server sent`)
    for (const e of this.events) {
      if (e.streamId === streamId && e.id > lastEventId) await send(e.id, e.message)
    }
    return streamId
  }

  /** Bytes held (for tests and stats). */
  get size(): number {
    return this.bytes
  }
}

function streamOf(eventId: EventId): StreamId | undefined {
  const cut = eventId.lastIndexOf('_')
  return cut > 0 ? eventId.slice(0, cut) : undefined
}
