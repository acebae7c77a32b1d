/** A stylesheet imported by the browser code arrives as its text (scripts/build-overlay.mjs minifies it). */
declare module '*.css' {
  const text: string
  export default text
}
