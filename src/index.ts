import { createApp } from "./app";

export { ExpertSession } from "./experts/expert-session";

const app = createApp();

export default {
  fetch: (request, env, ctx) => app.fetch(request, env, ctx),
} satisfies ExportedHandler<Env>;
