import { describe, expect, it } from "vitest";
import {
  buildPromptSegments,
  type ChatTemplate,
} from "../src/prompt/buildPromptSegments.js";
import { occludeSegments, occlusionPrompts, renderPrompt, sharedPrefixChars } from "../src/prompt/promptSegments.js";

const chatml: ChatTemplate = (messages) =>
  messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join("") + "<|im_start|>assistant\n";

describe("prompt segments", () => {
  const parts = { question: "Explain all the steps of the acetaminophen synthesis.", sets: ["Weigh 3.0 g.", "Add acetic anhydride.", "Filter the crystals."] };

  it("prompt - lays out system, question, labelled sets in order, then the instruction, through the template", () => {
    const segments = buildPromptSegments({ ...parts, system: "SYS", instruction: "INSTR" }, chatml);
    const full = renderPrompt(segments);
    expect(full).toBe(
      "<|im_start|>system\nSYS<|im_end|>\n<|im_start|>user\nQuestion: Explain all the steps of the acetaminophen synthesis.\n\nContext:\n" +
        "[1] Weigh 3.0 g.\n\n[2] Add acetic anhydride.\n\n[3] Filter the crystals.\n\nINSTR<|im_end|>\n<|im_start|>assistant\n",
    );
  });

  it("prompt - occluding set j removes that block only; the other labels stay", () => {
    const segments = buildPromptSegments(parts, chatml);
    const without2 = renderPrompt(segments, 1);
    expect(without2).toContain("[1] Weigh 3.0 g.\n\n[3] Filter the crystals.");
    expect(without2).not.toContain("acetic anhydride");
    expect(renderPrompt(occludeSegments(segments, 1))).toBe(without2);
    const all = occlusionPrompts(segments);
    expect(all).toHaveLength(4);
    expect(all[0]).toBe(renderPrompt(segments));
    expect(all[3]).toBe(renderPrompt(segments, 2));
  });

  it("prompt - the full prompt and variant j share exactly the prefix plus blocks before j", () => {
    const segments = buildPromptSegments(parts, chatml);
    const full = renderPrompt(segments);
    for (let j = 0; j < 3; j++) {
      const variant = renderPrompt(segments, j);
      const shared = sharedPrefixChars(segments, j);
      expect(variant.slice(0, shared)).toBe(full.slice(0, shared));
      expect(full.slice(shared).startsWith(segments.blocks[j]!)).toBe(true);
      expect(variant.slice(shared)).toBe(segments.blocks.slice(j + 1).join("") + segments.suffix);
    }
  });

  it("prompt - the plain template is used without a model and ends with an answer cue", () => {
    const text = renderPrompt(buildPromptSegments(parts));
    expect(text.startsWith("You are a careful laboratory assistant.")).toBe(true);
    expect(text.endsWith("Answer:")).toBe(true);
  });

  it("prompt - rejects empty questions or sets, bad indices and templates that rewrite content", () => {
    expect(() => buildPromptSegments({ question: " ", sets: ["a"] })).toThrow(/question is empty/);
    expect(() => buildPromptSegments({ question: "q", sets: ["a", ""] })).toThrow(/\[2\] is empty/);
    const segments = buildPromptSegments(parts);
    expect(() => renderPrompt(segments, 3)).toThrow(/out of range/);
    const lossy: ChatTemplate = (messages) => messages.map((m) => m.content.replace(/[\uE000-\uF8FF]/g, "")).join("");
    expect(() => buildPromptSegments(parts, lossy)).toThrow(/changed the user message/);
    const marker = "\uE000attr-rag-context\uE001";
    expect(() => buildPromptSegments({ question: `q ${marker}`, sets: ["a"] })).toThrow(new RangeError("buildPromptSegments: the question contains a reserved marker"));
    expect(() => buildPromptSegments({ question: "q", sets: [`a ${marker}`] })).toThrow(/\[1\] contains a reserved marker/);
    expect(() => buildPromptSegments({ question: "q", sets: ["a"], instruction: marker })).toThrow(/instruction contains a reserved marker/);
  });
});
