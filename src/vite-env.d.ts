// Ambient module types for Vite-specific imports used across the project.
// Declarations only: nothing here runs.
/// <reference types="vite/client" />

/** WGSL kernels are imported as source text: `import code from '../shaders/x.wgsl?raw'`. */
declare module '*.wgsl?raw' {
  const source: string;
  export default source;
}
