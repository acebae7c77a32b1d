/**
 * The few `chrome.*` extension APIs the extension uses, declared by hand (Chromium and Firefox
 * both offer them under `chrome`, promise-returning in Manifest V3).
 */
declare namespace chrome {
  namespace runtime {
    const id: string
    interface MessageSender {
      id?: string
      url?: string
      origin?: string
      frameId?: number
      tab?: { id?: number; windowId: number; url?: string }
    }
    interface Port {
      readonly name: string
      readonly sender?: MessageSender
      postMessage(message: unknown): void
      disconnect(): void
      onMessage: { addListener(cb: (message: unknown, port: Port) => void): void }
      onDisconnect: { addListener(cb: (port: Port) => void): void }
    }
    function getURL(path: string): string
    function connect(info: { name: string }): Port
    function sendMessage(message: unknown): Promise<unknown>
    function openOptionsPage(): Promise<void>
    const onConnect: { addListener(cb: (port: Port) => void): void }
    const onMessage: { addListener(cb: (message: unknown, sender: MessageSender, sendResponse: (response: unknown) => void) => boolean | undefined): void }
    const onInstalled: { addListener(cb: () => void): void }
    const onStartup: { addListener(cb: () => void): void }
  }
  namespace storage {
    interface Area {
      get(keys?: string | string[] | null): Promise<Record<string, unknown>>
      set(items: Record<string, unknown>): Promise<void>
      remove(keys: string | string[]): Promise<void>
    }
    const sync: Area
    const local: Area
    const managed: Area
    const onChanged: { addListener(cb: (changes: Record<string, { oldValue?: unknown; newValue?: unknown }>, area: string) => void): void }
  }
  namespace permissions {
    interface Permissions {
      origins?: string[]
      permissions?: string[]
    }
    function contains(p: Permissions): Promise<boolean>
    function request(p: Permissions): Promise<boolean>
    function remove(p: Permissions): Promise<boolean>
    const onAdded: { addListener(cb: (p: Permissions) => void): void }
    const onRemoved: { addListener(cb: (p: Permissions) => void): void }
  }
  namespace scripting {
    interface RegisteredContentScript {
      id: string
      js?: string[]
      matches?: string[]
      runAt?: 'document_start' | 'document_end' | 'document_idle'
      world?: 'MAIN' | 'ISOLATED'
      allFrames?: boolean
      persistAcrossSessions?: boolean
    }
    function registerContentScripts(scripts: RegisteredContentScript[]): Promise<void>
    function unregisterContentScripts(filter?: { ids?: string[] }): Promise<void>
    function getRegisteredContentScripts(filter?: { ids?: string[] }): Promise<RegisteredContentScript[]>
  }
  namespace tabs {
    interface Tab {
      id?: number
      url?: string
      windowId: number
    }
    function query(q: { active?: boolean; currentWindow?: boolean }): Promise<Tab[]>
    function captureVisibleTab(windowId: number, options: { format: 'png' | 'jpeg' }): Promise<string>
    function reload(tabId: number): Promise<void>
    function create(p: { url: string }): Promise<Tab>
  }
}
