import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

/** An MCP client transport over a child process we spawned ourselves (so the test sees its exit code). */
export class ChildTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  private readonly buffer = new ReadBuffer()

  constructor(private readonly child: ChildProcessWithoutNullStreams) {}

  async start(): Promise<void> {
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk)
      for (;;) {
        try {
          const message = this.buffer.readMessage()
          if (!message) break
          this.onmessage?.(message)
        } catch (e) {
          this.onerror?.(e as Error)
        }
      }
    })
    this.child.on('exit', () => this.onclose?.())
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.child.stdin.write(serializeMessage(message))
  }

  async close(): Promise<void> {
    this.child.stdin.end()
  }
}
