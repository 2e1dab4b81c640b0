import { TASKS_EXTENSION_ID_V2 } from "@modelcontextprotocol/ext-tasks/core/v2";

/**
 * The server's MCP Tasks capability (2025-11-25): expert calls may run as tasks, which a client
 * lists and cancels. Served by expert-tasks.ts; each expert says whether in `task`.
 */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } } as const;

/**
 * The 2026-07-28 Tasks extension (SEP-2663) as `capabilities.extensions` carries it: an empty
 * object (the extension has no settings). Served by expert-tasks-extension.ts.
 */
export const TASKS_EXTENSION = { [TASKS_EXTENSION_ID_V2]: {} } as const;
