// Public API of the evaluation harness's pure parts (Table I scores, confidence intervals, wins, the judge
// rubric, Fig. 1's gold chunks).
export { ANSWER_METRICS, scoreAnswer, type AnswerMetric, type AnswerScores } from "./answerMetrics.js";
export { bootstrapMean, quantileSorted, type BootstrapOptions, type MeanWithCi } from "./bootstrapMean.js";
export { majorityWinners, WIN_TIE_TOLERANCE, type MajorityResult, type QuestionScores } from "./majorityWins.js";
export {
  betterVerdict,
  JUDGE_CRITERIA,
  JUDGE_CRITERION_TEXT,
  JUDGE_MAX_PER_CRITERION,
  JUDGE_RETRY_MESSAGE,
  judgeMessages,
  parseJudgeReply,
  type JudgeCriterion,
  type JudgeVerdict,
} from "./judgeRubric.js";
export { goldAtCutoffs, goldChunkIds, locateSpan, type ChunkExtent, type GoldAtK } from "./goldChunks.js";
export { occlusionAgreement, type AttributionOutcome, type OcclusionAgreement } from "./occlusionAgreement.js";
