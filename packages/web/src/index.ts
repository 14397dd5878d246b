import { fileURLToPath } from "node:url";

/**
 * Where the built console lives (index.html, app.js, console.css): the gateway serves it at "/" of its HTTP
 * port. Resolved from the package root so it is the same folder whether this module runs from src/ or dist/.
 */
export const CONSOLE_DIR = fileURLToPath(new URL("../dist/console/", import.meta.url));
