// Public API of @attr-rag/selector. Siblings import only from here.
export { selectSets } from "./selectSets.js";
export { LocalSelector, type SelectorBackend, type SelectorDeps } from "./selectorBackend.js";
export { settingsToProto, type SelectionSettings } from "./selectionSettings.js";
export { COALITION_METHOD_OF, methodToProto, metricFromProto, type SelectionMetric } from "./protoNames.js";
export { serveSelectorOverNats } from "./nats/selectorOverNats.js";
export { NatsSelector } from "./nats/natsSelector.js";
