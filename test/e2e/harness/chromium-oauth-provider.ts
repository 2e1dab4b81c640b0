/**
 * The MCP SDK v1 client's own OAuth (`authProvider` on its transports), with the person's part
 * done in Chromium: the SDK discovers, registers, builds the PKCE authorization URL, refreshes
 * and retries by itself; this provider only keeps what the SDK asks it to keep, in memory, and
 * answers `redirectToAuthorization` by opening the URL and clicking Allow.
 */
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { randomBytes } from "node:crypto";
import type { BrowserContext } from "playwright-core";
import { watchClientRedirect } from "./chromium-browser";

export class ChromiumOAuthProvider implements OAuthClientProvider {
  /** Every token set the SDK saved, oldest first: the sign-in's, then one per refresh. */
  readonly savedTokens: OAuthTokens[] = [];
  /** Every authorization URL the SDK sent the person to. */
  readonly authorizationUrls: URL[] = [];
  private information: OAuthClientInformationMixed | undefined;
  private verifier: string | undefined;
  private sentState: string | undefined;
  private redirect: URL | undefined;

  /**
   * @param context a browser profile (loopbackOnlyContext) in which the consent page is clicked
   * @param redirectUrl a loopback callback, as a native client registers (RFC 8252 §7.3); the
   *   browser's visit there is answered with a stub page, the code read from the redirect
   */
  constructor(
    private readonly context: BrowserContext,
    readonly redirectUrl: string,
    private readonly clientName = "slipsnisse-e2e SDK v1 client",
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.clientName,
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  state(): string {
    this.sentState = randomBytes(16).toString("base64url");
    return this.sentState;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.information;
  }

  saveClientInformation(information: OAuthClientInformationMixed): void {
    this.information = information;
  }

  tokens(): OAuthTokens | undefined {
    return this.savedTokens.at(-1);
  }

  saveTokens(tokens: OAuthTokens): void {
    this.savedTokens.push(tokens);
  }

  /** Replaces the current access token with one the server never issued, as if it had expired. */
  spoilAccessToken(): void {
    const current = this.savedTokens.at(-1);
    if (!current) throw new Error("no tokens to spoil: sign in first");
    this.savedTokens[this.savedTokens.length - 1] = { ...current, access_token: `${current.access_token}-expired` };
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (!this.verifier) throw new Error("the SDK asked for a code verifier it never saved");
    return this.verifier;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    this.authorizationUrls.push(authorizationUrl);
    const callback = new URL(this.redirectUrl);
    const isCallback = (url: URL) => url.origin === callback.origin && url.pathname === callback.pathname;
    const page = await this.context.newPage();
    try {
      await page.route(isCallback, (route) => route.fulfill({ status: 200, contentType: "text/plain", body: "signed in; return to the client" }));
      await page.goto(authorizationUrl.toString());
      const watch = watchClientRedirect(page, isCallback);
      await page.getByRole("button", { name: "Allow" }).click();
      this.redirect = await watch.redirect;
    } finally {
      await page.close();
    }
  }

  /** The code from the browser's last visit to the callback, for `transport.finishAuth`. */
  authorizationCode(): string {
    const redirect = this.redirect;
    if (!redirect) throw new Error("the browser never reached the callback");
    if (redirect.searchParams.get("state") !== this.sentState) throw new Error("the callback's state is not the one this client sent");
    const code = redirect.searchParams.get("code");
    if (!code)
      throw new Error(`the callback carries no code: ${redirect.searchParams.get("error") ?? ""} ${redirect.searchParams.get("error_description") ?? ""}`);
    return code;
  }
}
