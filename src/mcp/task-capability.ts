/**
 * The server's MCP Tasks capability (2025-11-25): expert calls may run as tasks, which a client
 * lists and cancels. Served by expert-tasks.ts; each expert says whether in `task`.
 */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } } as const;
