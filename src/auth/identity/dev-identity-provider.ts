import type { AuthConfig } from "../auth-config";
import { DevSignInRefusedError, DevUserNotListedError } from "../auth-errors";
import { isLoopbackHost } from "../loopback-host";
import type { IdentityProvider } from "./identity-provider";

type DevConfig = Extract<AuthConfig["idp"], { IDP: "dev" }>;

/**
 * `npm start` sign-in: a configured local user, no password. It walks the same
 * consent → state → callback path as a real provider (the "upstream" is this Worker), so local
 * runs exercise the production flow, and it refuses outright unless the request was served
 * from loopback in a local/test environment. With DEV_USERS the consent page offers a choice
 * of login; the choice travels in the encrypted upstream transaction, never in the callback URL.
 */
export function devIdentityProvider(config: AuthConfig, idp: DevConfig): IdentityProvider {
  const loginChoices = devLogins(idp);
  return {
    name: "the dev identity provider",
    loginChoices,
    async authorizeUrl({ state, callbackUrl, data }) {
      const url = new URL(callbackUrl);
      assertDevAllowed(config, url.hostname);
      assertListed(loginChoices, data.login ?? idp.DEV_USER);
      url.searchParams.set("state", state);
      return url.toString();
    },
    async finish({ request, data }) {
      assertDevAllowed(config, new URL(request.url).hostname);
      const login = data.login ?? idp.DEV_USER;
      assertListed(loginChoices, login);
      // DEV_EMAIL belongs to DEV_USER; the other dev users have none.
      const email = login === idp.DEV_USER ? idp.DEV_EMAIL : undefined;
      return { provider: "dev", subject: login, login, email };
    },
  };
}

/** DEV_USER first (the default), then DEV_USERS without repeats. */
export function devLogins(idp: DevConfig): string[] {
  return [...new Set([idp.DEV_USER, ...idp.DEV_USERS.filter((login) => login !== idp.DEV_USER.toLowerCase())])];
}

function assertListed(choices: readonly string[], login: string): void {
  if (!choices.includes(login)) throw new DevUserNotListedError(login);
}

export function assertDevAllowed(config: AuthConfig, hostname: string): void {
  const localEnvironment = config.ENVIRONMENT === "local" || config.ENVIRONMENT === "test";
  if (!localEnvironment) throw new DevSignInRefusedError(hostname, config.ENVIRONMENT, "environment");
  if (!isLoopbackHost(hostname)) throw new DevSignInRefusedError(hostname, config.ENVIRONMENT, "host");
}
