import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { circles } from "../../../tools/ci/importGraph.mjs";
import { includeGraph, readUnits } from "../../../tools/ci/includeGraph.mjs";

const NATIVE_SRC = fileURLToPath(new URL("../../../native/src", import.meta.url));

describe("the include graph of native/src", () => {
  it("includes - no circles between C++ units (a .cpp with its .h is one unit)", () => {
    const graph = includeGraph(readUnits(NATIVE_SRC));
    expect(graph.size).toBeGreaterThan(15);
    expect(circles(graph)).toEqual([]);
  });

  it("includes - a deliberately added circle is caught, between .cpp files and between headers", () => {
    const dir = resolve("/virtual/native/src");
    const virtual = new Map([
      // A.cpp and B.cpp include each other's header: a circle of units the compiler accepts.
      [join(dir, "A.h"), "#pragma once\n#include <vector>\n"],
      [join(dir, "A.cpp"), '#include "A.h"\n#include "B.h"\n'],
      [join(dir, "B.h"), '#pragma once\n#include "llama.h"\n'],
      [join(dir, "B.cpp"), '#include "B.h"\n#include "A.h"\n'],
      // Headers including each other (guarded by #pragma once, so this compiles too).
      [join(dir, "C.h"), '#pragma once\n#include "D.h"\n'],
      [join(dir, "D.h"), '#pragma once\n  #  include "C.h"\n'],
      // A .cpp including its own header, and a unit without a header, are no circle.
      [join(dir, "E.h"), '#pragma once\n#include "A.h"\n'],
      [join(dir, "E.cpp"), '#include "E.h"\n'],
      [join(dir, "Leaf.cpp"), '#include "E.h"\n#include "Missing.h"\n'],
    ]);
    const graph = includeGraph(virtual);
    expect(graph.get("E")).toEqual(["A"]);
    expect(graph.get("Leaf")).toEqual(["E"]);
    expect(circles(graph)).toEqual([
      ["A", "B"],
      ["C", "D"],
    ]);
  });
});
