// The report renderer's public face: the gateway's HTML reports and the web console (bundled for the
// browser) render from these same functions. Pure string building, no Node APIs.
export { collectReportData, isKept, type ReportData } from "./reportData.js";
export { renderReport, renderReportSections, type ReportInput } from "./renderReport.js";
export { renderHeader } from "./header.js";
export { escapeHtml } from "./escapeHtml.js";
export { REPORT_CSS } from "./styles.js";
