// Types for comlink's Node adapter, which ships as .mjs beside a .d.ts that TypeScript's
// bundler resolution does not pair with it.
declare module 'comlink/dist/esm/node-adapter.mjs' {
  import nodeEndpoint from 'comlink/dist/esm/node-adapter';
  export default nodeEndpoint;
}
