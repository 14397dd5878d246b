// How an answer is cut into the sentences that citations and sentence-level attribution speak of.

export interface SentenceSpan {
  start: number;
  end: number;
  text: string;
}

/**
 * Sentences (or lines) of the answer with UTF-16 offsets, whitespace trimmed off their ends. A sentence
 * ends at a newline or at a run of . ! ? followed by whitespace or the end ("2.5 g" does not end one).
 */
export function answerSentences(text: string): SentenceSpan[] {
  const spans: SentenceSpan[] = [];
  let start = 0;
  const close = (end: number) => {
    const raw = text.slice(start, end);
    const body = raw.trim();
    if (body !== "") {
      const at = start + (raw.length - raw.trimStart().length);
      spans.push({ start: at, end: at + body.length, text: body });
    }
    start = end;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "\n") close(i + 1);
    else if (".!?".includes(ch)) {
      let j = i;
      while (j + 1 < text.length && ".!?".includes(text[j + 1]!)) j++;
      if (j + 1 === text.length || /\s/.test(text[j + 1]!)) close(j + 1);
      i = j;
    }
  }
  close(text.length);
  return spans;
}
