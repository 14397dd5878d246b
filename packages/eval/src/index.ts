// Public API of @attr-rag/eval: the paper's evaluation harness. Retrieval (Recall@k, MRR, nDCG@10, fusion
// tuning), answers against gold answers with LLM judges (Table I/II, summary, charts, HTML report), attribution
// methods against exact Shapley on synthetic relationship sets (RQ1/RQ2), and approximate occlusion against
// exact. It never parses flags or opens a server: `attr-rag eval …` hands it the Ask to run.
export { CHUNK_FETCH_FACTOR, EVAL_MODES, evaluateRetrieval, formatReport, NDCG_K, parseKList, parseModes, scoreRankings, type EvalMode, type ModeScores, type RetrievalEvalOptions, type RetrievalReport } from "./retrieval/retrievalEval.js";
export { formatTune, TUNE_RECALL_K, type TuneResult } from "./tuneFusion.js";
export { ingestCorpus, loadQuestions, scanCorpus, type EvalQuestion } from "./evalInputs.js";
export { formatDuration, ingestBenchmark } from "./ingestBenchmark.js";
export { DEFAULT_ANSWER_METHODS, parseAnswerMethods, requestFor } from "./answers/answerMethods.js";
export { readRows } from "./answers/answerRows.js";
export { formatAnswersTable } from "./answers/answersSummary.js";
export { loadBenchmark } from "./answers/benchmark.js";
export { httpJudge, localJudge, type Judge } from "./answers/judges.js";
export { answerQuestions, writeAnswersSummary, type AskFunction } from "./answers/runAnswers.js";
export { evaluateExample, exhaustiveTopK, topK } from "./attributionEval.js";
export { RELATIONSHIP_KINDS, relationshipSets, type RelationshipKind } from "./relationshipSets.js";
export { attributionEvalText, runAttributionEval, type AttributionEvalReport } from "./attributionRun.js";
export { APPROXIMATE_EVAL_STRATEGIES, compareStrategies, occlusionEvalText, parseStrategies } from "./occlusion/runOcclusionEval.js";
export { summarizeStrategy } from "./occlusion/occlusionSummary.js";
export { renderOcclusionReport } from "./occlusion/occlusionReport.js";
