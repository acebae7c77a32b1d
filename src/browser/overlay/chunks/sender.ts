/**
 * The chunk of the outbox's sender (../sync/sender.ts), fetched when something waits in the
 * outbox: most page loads have nothing to send (../sync/outbox.ts, `LazySender`).
 */
export { Sender } from '../sync/sender.js'
