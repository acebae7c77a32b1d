/** What the extension's parts say to each other (page ↔ relay ↔ service worker). */

/** The service worker's answer to a request, message by message: the head, then chunks of text, then the end (or an error). */
export type FetchReply = { status: number; statusText: string; contentType: string } | { chunk: string } | { end: true } | { error: string }

export interface Who {
  name: string
  id: string
  expiresAt: string
}

export type PageMessage =
  | { type: 'config' }
  | { type: 'capture'; rect: { x: number; y: number; width: number; height: number }; viewport: { width: number; height: number }; masks?: { x: number; y: number; width: number; height: number }[] }
  | { type: 'openSignIn' }
  | { type: 'session'; session: { token: string; name: string; id: string; expiresAt: string } }
  | { type: 'signOut' }
  | { type: 'status' }

/** What the relay tells the page over the private channel. */
export type RelayMessage = { type: 'config'; server: string; who: Who | null; maskInputs?: boolean } | { type: 'who'; who: Who | null } | { type: 'off' }

/** The first message on the window: the private channel (its port travels with it). */
export const BRIDGE = 'marginalia:extension-bridge'
