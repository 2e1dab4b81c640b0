import type { AuthConfig } from "../auth-config";
import { DevSignInRefusedError } from "../auth-errors";
import { isLoopbackHost } from "../loopback-host";
import type { IdentityProvider } from "./identity-provider";

type DevConfig = Extract<AuthConfig["idp"], { IDP: "dev" }>;

/**
 * `npm start` sign-in: the configured local user, no password. It walks the same
 * consent → state → callback path as a real provider (the "upstream" is this Worker), so local
 * runs exercise the production flow, and it refuses outright unless the request was served
 * from loopback in a local/test environment.
 */
export function devIdentityProvider(config: AuthConfig, idp: DevConfig): IdentityProvider {
  return {
    name: "the dev identity provider",
    async authorizeUrl({ state, callbackUrl }) {
      const url = new URL(callbackUrl);
      assertDevAllowed(config, url.hostname);
      url.searchParams.set("state", state);
      return url.toString();
    },
    async finish({ request }) {
      assertDevAllowed(config, new URL(request.url).hostname);
      return { provider: "dev", subject: idp.DEV_USER, login: idp.DEV_USER, email: idp.DEV_EMAIL };
    },
  };
}

export function assertDevAllowed(config: AuthConfig, hostname: string): void {
  const localEnvironment = config.ENVIRONMENT === "local" || config.ENVIRONMENT === "test";
  if (!localEnvironment || !isLoopbackHost(hostname)) {
    throw new DevSignInRefusedError(hostname, config.ENVIRONMENT);
  }
}
