/**
 * `overlay-after-loader.js`: the overlay as loader.js (the head snippet's script) loads it, once it
 * has started the page log and the steps' recorder. It takes those as they run and holds none of
 * their code; otherwise it is overlay.js (./main.ts).
 */
import { boot } from './boot.js'
import { runningRecorders } from './recorders.js'

if (typeof window !== 'undefined' && typeof document !== 'undefined') boot(runningRecorders, 'overlay-after-loader.js')
