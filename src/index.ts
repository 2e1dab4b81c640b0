import { createApp } from "./app";

export { ExpertSession } from "./experts/expert-session";
export { LegacySseSession } from "./mcp/legacy-sse/legacy-sse-session";

const app = createApp();

export default {
  fetch: (request, env, ctx) => app.fetch(request, env, ctx),
} satisfies ExportedHandler<Env>;
