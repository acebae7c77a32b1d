/**
 * `marginalia/webpack`: the source-marking transform for webpack and rspack (and Next.js, whose
 * webpack config and Turbopack loader rules take it). Dev builds only unless `sourceLocations:
 * 'ids'`; the overlay comes from `marginalia serve` (a script tag), not from this plugin.
 *
 *   // webpack.config.js                  // rspack.config.js
 *   plugins: [marginaliaWebpack()]        plugins: [marginaliaRspack()]
 */
import { marginaliaSources, type MarginaliaSourcesOptions } from './shared/unplugin.js'

export type { MarginaliaSourcesOptions }
export const marginaliaWebpack = marginaliaSources.webpack
export const marginaliaRspack = marginaliaSources.rspack
/** @alias the default export is the webpack plugin, for `import marginalia from 'marginalia/webpack'`. */
export default marginaliaWebpack
