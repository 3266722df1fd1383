/**
 * YAML text, for the commands that print it to load when they print it. Through this module and not
 * `import('yaml')`: yaml is CommonJS, and the bundle (tools/bundle-package.ts) loads a CommonJS
 * package imported lazily as a chunk with a default export only, where `{ stringify }` is undefined.
 */
export { stringify } from 'yaml';
