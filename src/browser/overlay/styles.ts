/** The overlay's stylesheet, inside its shadow root: the page's CSS cannot reach it, and it cannot reach the page. */
export const OVERLAY_CSS = /* css */ `
:host {
  all: initial;
  position: fixed;
  inset: 0;
  pointer-events: none;
  z-index: 2147483646;
  contain: layout style;
}
*, *::before, *::after { box-sizing: border-box; }
.mg {
  --accent: #4f46e5;
  --accent-strong: #4338ca;
  --ink: #0f172a;
  --ink-2: #334155;
  --muted: #64748b;
  --line: #e2e8f0;
  --paper: #ffffff;
  --soft: #f8fafc;
  --pending: #f59e0b;
  --acknowledged: #3b82f6;
  --resolved: #16a34a;
  --dismissed: #94a3b8;
  --question: #db2777;
  --danger: #dc2626;
  --shadow: 0 18px 40px -12px rgba(15, 23, 42, .35), 0 4px 12px rgba(15, 23, 42, .08);
  font: 13px/1.45 Inter, ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--ink);
  -webkit-font-smoothing: antialiased;
  text-align: left;
  letter-spacing: normal;
}
[hidden] { display: none !important; }
button, textarea, input { font: inherit; color: inherit; letter-spacing: inherit; }
button { cursor: pointer; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }

/* ---- highlight while annotating ---- */
.highlight {
  position: fixed;
  pointer-events: none;
  border: 2px solid var(--accent);
  background: rgba(79, 70, 229, .08);
  border-radius: 4px;
  transition: all 60ms ease-out;
}
.highlight .label {
  position: absolute;
  left: -2px;
  bottom: 100%;
  margin-bottom: 4px;
  max-width: 360px;
  padding: 2px 7px;
  border-radius: 5px;
  background: var(--accent);
  color: #fff;
  font: 600 11px/1.6 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  white-space: nowrap;
  overflow: hidden;
  text-overflow: ellipsis;
}
.highlight.below .label { bottom: auto; top: 100%; margin: 4px 0 0; }
.target-outline {
  position: fixed;
  pointer-events: none;
  border: 2px dashed var(--accent);
  border-radius: 4px;
}

/* ---- pins ---- */
.pins { position: fixed; inset: 0; pointer-events: none; }
.pin {
  position: fixed;
  pointer-events: auto;
  width: 26px;
  height: 26px;
  margin: 0;
  padding: 0;
  border-radius: 50% 50% 50% 4px;
  border: 2px solid #fff;
  background: var(--pending);
  color: #fff;
  font: 700 12px/22px Inter, ui-sans-serif, system-ui, sans-serif;
  text-align: center;
  box-shadow: 0 4px 10px rgba(15, 23, 42, .3);
  transform: translate(-4px, -22px);
  transition: transform 120ms ease;
}
.pin:hover { transform: translate(-4px, -22px) scale(1.12); }
.pin[data-status="acknowledged"] { background: var(--acknowledged); }
.pin[data-status="resolved"] { background: var(--resolved); }
.pin[data-status="dismissed"] { background: var(--dismissed); }
.pin[data-question] { box-shadow: 0 0 0 3px var(--question), 0 4px 10px rgba(15, 23, 42, .3); animation: mg-ring 1.6s ease-in-out infinite; }
.pin[data-question]::after {
  content: "?";
  position: absolute;
  right: -9px;
  top: -9px;
  width: 16px;
  height: 16px;
  border-radius: 50%;
  background: var(--question);
  color: #fff;
  font: 800 10px/16px Inter, ui-sans-serif, system-ui, sans-serif;
  border: 1.5px solid #fff;
}
.pin[aria-expanded="true"] { outline: 2px solid var(--ink); outline-offset: 2px; }
@keyframes mg-ring { 50% { box-shadow: 0 0 0 6px rgba(219, 39, 119, .35), 0 4px 10px rgba(15, 23, 42, .3); } }

/* ---- panels ---- */
.panel {
  position: fixed;
  z-index: 2; /* above the toolbar: the form being filled in always wins */
  pointer-events: auto;
  width: 360px;
  max-width: calc(100vw - 24px);
  max-height: min(560px, calc(100vh - 24px));
  display: flex;
  flex-direction: column;
  background: var(--paper);
  border: 1px solid var(--line);
  border-radius: 14px;
  box-shadow: var(--shadow);
  overflow: hidden;
}
.panel-head {
  display: flex;
  align-items: center;
  gap: 8px;
  padding: 12px 12px 10px 14px;
  border-bottom: 1px solid var(--line);
}
.panel-title { font-weight: 650; font-size: 13px; flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.panel-body { padding: 12px 14px; overflow-y: auto; display: flex; flex-direction: column; gap: 10px; }
.panel-foot { display: flex; align-items: center; gap: 8px; padding: 10px 14px 12px; border-top: 1px solid var(--line); background: var(--soft); }
.spacer { flex: 1; }
.icon-btn {
  width: 28px; height: 28px; border-radius: 8px; border: 0; background: transparent; color: var(--muted);
  display: inline-grid; place-items: center; font-size: 18px; line-height: 1;
}
.icon-btn:hover { background: #f1f5f9; color: var(--ink); }
.btn {
  border: 1px solid var(--line); background: #fff; color: var(--ink-2);
  border-radius: 8px; padding: 6px 12px; font-weight: 550; font-size: 12.5px;
}
.btn:hover { background: #f1f5f9; }
a.btn { text-decoration: none; display: inline-block; line-height: 1.3; }
.btn.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
.btn.primary:hover { background: var(--accent-strong); }
.btn.primary:disabled { opacity: .55; cursor: default; }
.btn.danger { color: var(--danger); }
.btn.danger.confirm { background: var(--danger); border-color: var(--danger); color: #fff; }
.hint { color: var(--muted); font-size: 11.5px; }
textarea {
  width: 100%; min-height: 84px; resize: vertical; padding: 9px 10px;
  border: 1px solid #cbd5e1; border-radius: 10px; background: #fff; color: var(--ink);
  font-size: 13px; line-height: 1.45;
}
textarea:focus { outline: none; border-color: var(--accent); box-shadow: 0 0 0 3px rgba(79, 70, 229, .18); }
.target {
  display: flex; flex-direction: column; gap: 2px; padding: 8px 10px; border-radius: 10px; background: var(--soft); border: 1px solid var(--line);
}
.target code, .mono { font: 500 11.5px/1.5 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; color: var(--accent-strong); word-break: break-all; }
.target .snippet { color: var(--muted); font-size: 12px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
blockquote.selected {
  margin: 0; padding: 6px 10px; border-left: 3px solid var(--accent); background: #eef2ff; border-radius: 0 8px 8px 0;
  color: var(--ink-2); font-style: italic; max-height: 90px; overflow: auto;
}
fieldset { border: 0; margin: 0; padding: 0; min-width: 0; }
legend { padding: 0; margin-bottom: 5px; font-size: 11px; font-weight: 650; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.seg { display: flex; flex-wrap: wrap; gap: 6px; }
.seg label { position: relative; }
.seg input { position: absolute; opacity: 0; inset: 0; margin: 0; cursor: pointer; }
.seg span {
  display: inline-block; padding: 4px 10px; border-radius: 999px; border: 1px solid var(--line); background: #fff;
  color: var(--ink-2); font-size: 12px; font-weight: 550; text-transform: capitalize;
}
.seg input:checked + span { background: var(--ink); border-color: var(--ink); color: #fff; }
.seg input:focus-visible + span { outline: 2px solid var(--accent); outline-offset: 2px; }
.error { color: var(--danger); font-size: 12px; }

/* ---- thread ---- */
.num {
  flex: none; width: 24px; height: 24px; border-radius: 50% 50% 50% 4px; background: var(--pending); color: #fff;
  display: inline-grid; place-items: center; font-weight: 700; font-size: 12px;
}
.num[data-status="acknowledged"] { background: var(--acknowledged); }
.num[data-status="resolved"] { background: var(--resolved); }
.num[data-status="dismissed"] { background: var(--dismissed); }
.chip {
  display: inline-flex; align-items: center; gap: 5px; padding: 1px 8px; border-radius: 999px; font-size: 11px; font-weight: 650;
  background: #fef3c7; color: #92400e; white-space: nowrap;
}
.chip::before { content: ""; width: 6px; height: 6px; border-radius: 50%; background: currentColor; }
.chip[data-status="acknowledged"] { background: #dbeafe; color: #1d4ed8; }
.chip[data-status="resolved"] { background: #dcfce7; color: #15803d; }
.chip[data-status="dismissed"] { background: #f1f5f9; color: #475569; }
.tags { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }
.tag { font-size: 11px; color: var(--muted); border: 1px solid var(--line); border-radius: 6px; padding: 0 6px; text-transform: capitalize; }
.tag[data-severity="blocking"] { color: #b91c1c; border-color: #fecaca; background: #fef2f2; }
.comment { margin: 0; font-size: 14px; line-height: 1.5; white-space: pre-wrap; word-wrap: break-word; color: var(--ink); }
.meta { color: var(--muted); font-size: 11.5px; }
.replies { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 8px; }
.reply { padding: 8px 10px; border-radius: 10px; background: var(--soft); border: 1px solid var(--line); }
.reply[data-author="agent"] { background: #eef2ff; border-color: #e0e7ff; }
.reply[data-kind="question"] { background: #fdf2f8; border-color: #f9a8d4; }
.reply .who { display: flex; gap: 6px; align-items: baseline; font-size: 11.5px; color: var(--muted); margin-bottom: 2px; }
.reply .who b { color: var(--ink-2); font-weight: 650; }
.reply[data-kind="question"] .who b { color: #9d174d; }
.reply[data-open] { border: 1.5px solid var(--question); box-shadow: 0 0 0 3px rgba(219, 39, 119, .12); }
.reply[data-open] .who b::before {
  content: "?"; display: inline-block; width: 15px; height: 15px; margin-right: 5px; border-radius: 50%;
  background: var(--question); color: #fff; font-size: 10px; line-height: 15px; text-align: center; vertical-align: 1px;
}
.reply p { margin: 0; white-space: pre-wrap; word-wrap: break-word; }
.empty { color: var(--muted); font-size: 12px; }
.reply-form { display: flex; flex-direction: column; gap: 8px; }
.reply-form textarea { min-height: 56px; }
.reply-form .row { display: flex; gap: 8px; align-items: center; }

/* ---- list ---- */
.list { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 4px; }
.list button.item {
  width: 100%; display: flex; gap: 10px; align-items: flex-start; text-align: left; padding: 8px; border-radius: 10px;
  border: 1px solid transparent; background: transparent;
}
.list button.item:hover { background: var(--soft); border-color: var(--line); }
.list .item .text { flex: 1; min-width: 0; display: flex; flex-direction: column; gap: 2px; }
.list .item .line { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.outbox-item { padding: 8px 10px; border-radius: 10px; border: 1px dashed #fca5a5; background: #fff7f7; display: flex; flex-direction: column; gap: 6px; }

/* ---- toolbar ---- */
.dock {
  position: fixed; right: 16px; bottom: 16px; pointer-events: none; z-index: 1;
  display: flex; flex-direction: column; align-items: flex-end; gap: 8px;
}
.alert {
  pointer-events: auto; max-width: 380px; padding: 10px 12px; border-radius: 12px; background: #fff1f2; border: 1px solid #fecdd3;
  color: #9f1239; box-shadow: var(--shadow); display: flex; gap: 10px; align-items: flex-start; font-size: 12.5px;
}
.alert b { display: block; }
.alert .btn { flex: none; }
.toast {
  pointer-events: none; padding: 8px 12px; border-radius: 10px; background: var(--ink); color: #fff; font-size: 12.5px;
  box-shadow: var(--shadow); opacity: 0; transform: translateY(6px); transition: opacity 160ms, transform 160ms;
}
.toast.show { opacity: 1; transform: none; }
.bar {
  pointer-events: auto; display: flex; align-items: center; gap: 4px; padding: 5px; border-radius: 999px;
  background: var(--ink); color: #e2e8f0; box-shadow: var(--shadow);
}
.bar button { border: 0; background: transparent; color: inherit; border-radius: 999px; }
.brand {
  width: 30px; height: 30px; display: grid; place-items: center; font: 800 14px/1 Georgia, "Times New Roman", serif; font-style: italic;
  background: linear-gradient(135deg, #818cf8, #4f46e5) !important; color: #fff !important;
}
.agent { display: inline-flex; align-items: center; gap: 7px; padding: 0 10px 0 8px; font-size: 12px; font-weight: 550; white-space: nowrap; }
.dot { width: 8px; height: 8px; border-radius: 50%; background: #94a3b8; flex: none; }
.agent[data-state="listening"] .dot { background: #22c55e; box-shadow: 0 0 0 0 rgba(34, 197, 94, .6); animation: mg-pulse 1.8s infinite; }
.agent[data-state="connected"] .dot { background: #60a5fa; }
.agent[data-state="offline"] .dot { background: #f87171; }
@keyframes mg-pulse { 70% { box-shadow: 0 0 0 7px rgba(34, 197, 94, 0); } 100% { box-shadow: 0 0 0 0 rgba(34, 197, 94, 0); } }
.annotate { display: inline-flex; align-items: center; gap: 6px; padding: 6px 12px !important; font-weight: 600; font-size: 12.5px; }
.annotate:hover, .count:hover { background: rgba(255, 255, 255, .1) !important; }
.annotate[aria-pressed="true"] { background: #fff !important; color: var(--ink) !important; }
.count { min-width: 30px; height: 30px; padding: 0 9px !important; font-weight: 700; font-size: 12px; display: inline-flex; align-items: center; gap: 5px; }
.count[data-question]::before { content: "?"; width: 16px; height: 16px; border-radius: 50%; background: var(--question); color: #fff; font-size: 10px; line-height: 16px; text-align: center; }
.sep { width: 1px; height: 18px; background: rgba(255, 255, 255, .16); margin: 0 2px; }
.bar.collapsed > :not(.brand) { display: none; }
.kbd { font: 600 10px/1 ui-monospace, SFMono-Regular, Menlo, monospace; opacity: .6; }
`

/** Put on the page's root while annotating (the page's own elements need the crosshair). */
export const PAGE_CURSOR_CSS = '[data-marginalia-annotating], [data-marginalia-annotating] * { cursor: crosshair !important; }'
