// Which file defines which fully-qualified symbol, and which files each file imports: what a reflection
// server needs to answer file_containing_symbol and to send a file together with everything it depends on.
import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, type DescriptorProto, type EnumDescriptorProto } from "@bufbuild/protobuf/wkt";

interface IndexedFile {
  readonly bytes: Uint8Array;
  readonly dependencies: readonly string[];
}

export class DescriptorIndex {
  readonly #files = new Map<string, IndexedFile>();
  /** Fully-qualified name (no leading dot) → the file that defines it. */
  readonly #symbols = new Map<string, string>();
  readonly #messages = new Set<string>();
  readonly #services: string[] = [];

  /** `files`: serialized FileDescriptorProtos. Every service they define is listed. */
  constructor(files: readonly Uint8Array[]) {
    for (const bytes of files) {
      const file = fromBinary(FileDescriptorProtoSchema, bytes);
      if (this.#files.has(file.name)) continue;
      this.#files.set(file.name, { bytes, dependencies: file.dependency });
      const scope = file.package === "" ? "" : `${file.package}.`;
      for (const m of file.messageType) this.#indexMessage(m, scope, file.name);
      for (const e of file.enumType) this.#indexEnum(e, scope, file.name);
      for (const ext of file.extension) this.#symbols.set(scope + ext.name, file.name);
      for (const s of file.service) {
        const name = scope + s.name;
        this.#symbols.set(name, file.name);
        this.#services.push(name);
        for (const method of s.method) this.#symbols.set(`${name}.${method.name}`, file.name);
      }
    }
    for (const [name, file] of this.#files) {
      for (const dep of file.dependencies) {
        if (!this.#files.has(dep)) throw new Error(`descriptor ${name} imports ${dep}, which is not in the descriptor set`);
      }
    }
  }

  get services(): readonly string[] {
    return this.#services;
  }

  fileOfSymbol(symbol: string): string | undefined {
    return this.#symbols.get(symbol.replace(/^\./, ""));
  }

  isMessage(name: string): boolean {
    return this.#messages.has(name.replace(/^\./, ""));
  }

  /** The file's bytes first, then those of every file it imports, directly or not, each once. */
  withDependencies(fileName: string): Uint8Array[] | undefined {
    if (!this.#files.has(fileName)) return undefined;
    const out: Uint8Array[] = [];
    const seen = new Set<string>();
    const visit = (name: string) => {
      if (seen.has(name)) return;
      seen.add(name);
      const file = this.#files.get(name)!;
      out.push(file.bytes);
      for (const dep of file.dependencies) visit(dep);
    };
    visit(fileName);
    return out;
  }

  #indexMessage(m: DescriptorProto, scope: string, fileName: string): void {
    const name = scope + m.name;
    this.#symbols.set(name, fileName);
    this.#messages.add(name);
    for (const f of m.field) this.#symbols.set(`${name}.${f.name}`, fileName);
    for (const o of m.oneofDecl) this.#symbols.set(`${name}.${o.name}`, fileName);
    for (const ext of m.extension) this.#symbols.set(`${name}.${ext.name}`, fileName);
    for (const nested of m.nestedType) this.#indexMessage(nested, `${name}.`, fileName);
    for (const e of m.enumType) this.#indexEnum(e, `${name}.`, fileName);
  }

  #indexEnum(e: EnumDescriptorProto, scope: string, fileName: string): void {
    this.#symbols.set(scope + e.name, fileName);
    // Enum values are scoped as siblings of their enum (C++ scoping rules), e.g. attr_rag.v1.STAGE_RETRIEVED.
    for (const v of e.value) this.#symbols.set(scope + v.name, fileName);
  }
}
