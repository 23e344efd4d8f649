/**
 * The WebAssembly JS API subset kith uses. TypeScript ships these types only in lib.dom, which a
 * Node service should not pull in; @types/node 20 does not declare them.
 */
declare namespace WebAssembly {
  interface MemoryDescriptor {
    initial: number;
    maximum?: number;
    shared?: boolean;
  }
  class Memory {
    constructor(descriptor: MemoryDescriptor);
    readonly buffer: ArrayBuffer;
    grow(delta: number): number;
  }
  class Module {
    constructor(bytes: BufferSource);
  }
  type ImportValue = Memory | ((...args: never[]) => unknown) | number;
  type Imports = Record<string, Record<string, ImportValue>>;
  type Exports = Record<string, unknown>;
  class Instance {
    constructor(module: Module, imports?: Imports);
    readonly exports: Exports;
  }
  function validate(bytes: BufferSource): boolean;
}
