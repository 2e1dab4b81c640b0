import type {
  OAuthClientInformationContext,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import { readSecret } from "../../env";
import { ClientCredentialsUnsupportedError } from "./connection-errors";
import { assertPinnedIssuer, pinIssuer, readIssuerPin } from "./issuer-pin";
import { downstreamClientKey } from "../../storage-keys";
import { CLIENT_METADATA_PATH, type ConnectionTarget } from "./connection-target";
import { storedClientSchema, type StoredClient, type StoredTokens } from "./connection-schema";
import type { TokenCipher } from "./token-cipher";

export interface ProviderState {
  target: ConnectionTarget;
  redirectUrl: string;
  state?: string;
  verifier?: string;
  client?: StoredClient;
  tokens?: StoredTokens;
  discovery?: OAuthDiscoveryState;
}

/**
 * The MCP SDK's OAuthClientProvider over one operation of the UserConnections object (start a
 * sign-in, redeem its code, refresh): the SDK's `auth()` does discovery (RFC 9728, RFC 8414 /
 * OIDC), registration, PKCE S256 and the `resource` parameter (RFC 8707); this only holds what
 * it reads and records what it saves, for the object to seal and store.
 *
 * Client registration, in order: a client id (and secret) the admin put in the catalog as
 * Worker secrets, pinned to one issuer (issuer-pin.ts); one registered earlier for this server
 * and redirect URL (dynamic client registration is remembered per server, in OAUTH_KV, sealed,
 * not per member); else the SDK registers (RFC 7591) and saveClientInformation remembers it.
 */
export class ConnectionOAuthProvider implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  savedTokens: StoredTokens | undefined;
  invalidated = new Set<string>();

  constructor(
    private readonly env: Env,
    private readonly cipher: TokenCipher,
    readonly current: ProviderState,
  ) {}

  /** None for the client-credentials grant: the SDK's `auth()` then asks for a token at once (non-interactive). */
  get redirectUrl(): string | undefined {
    return this.clientCredentials ? undefined : this.current.redirectUrl;
  }

  private get clientCredentials(): boolean {
    return this.current.target.grant === "client_credentials";
  }

  /**
   * The client-credentials token request, or undefined for the authorization-code flow (the
   * SDK's default). Called after discovery and before the client's secret is sent: an
   * authorization server whose metadata does not list the grant gets nothing.
   */
  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (!this.clientCredentials) return undefined;
    const supported = this.current.discovery?.authorizationServerMetadata?.grant_types_supported;
    if (!supported?.includes("client_credentials")) throw new ClientCredentialsUnsupportedError();
    return new URLSearchParams({ grant_type: "client_credentials", ...(scope === undefined ? {} : { scope }) });
  }

  /**
   * First choice of registration: a Client ID Metadata Document Slipsnisse serves itself
   * (/connect/client-metadata.json, connect-routes.ts), used by the SDK when the authorization
   * server advertises `client_id_metadata_document_supported`. Only on an https origin (the
   * document's URL is the client id, and must be https).
   */
  get clientMetadataUrl(): string | undefined {
    const redirect = new URL(this.current.redirectUrl);
    return redirect.protocol === "https:" ? `${redirect.origin}${CLIENT_METADATA_PATH}` : undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    if (this.clientCredentials)
      return {
        client_name: "Slipsnisse",
        redirect_uris: [],
        grant_types: ["client_credentials"],
        token_endpoint_auth_method: "client_secret_basic",
        ...(this.current.target.scopes === undefined ? {} : { scope: this.current.target.scopes.join(" ") }),
      };
    return {
      client_name: "Slipsnisse",
      redirect_uris: [this.current.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...(this.current.target.scopes === undefined ? {} : { scope: this.current.target.scopes.join(" ") }),
    };
  }

  state(): string {
    if (this.current.state === undefined) throw new Error("no OAuth state for this sign-in");
    return this.current.state;
  }

  /**
   * A pre-registered client is answered stamped with the issuer it is pinned to (issuer-pin.ts),
   * so the SDK's own check (SEP-2352) holds too; `ctx.issuer`, the issuer discovery found, is
   * checked against the pin first and refused with an error naming both, before any request
   * carries the client's id or secret. Its first use pins it when the catalog names no issuer.
   */
  async clientInformation(ctx?: OAuthClientInformationContext): Promise<StoredOAuthClientInformation | undefined> {
    const { clientIdSecret, clientSecretSecret } = this.current.target;
    if (clientIdSecret !== undefined) {
      const clientId = readSecret(this.env, clientIdSecret);
      if (clientId === undefined) throw new Error(`the Worker secret ${clientIdSecret} (auth.client_id_secret) is not set`);
      const secret = clientSecretSecret === undefined ? undefined : readSecret(this.env, clientSecretSecret);
      if (clientSecretSecret !== undefined && secret === undefined)
        throw new Error(`the Worker secret ${clientSecretSecret} (auth.client_secret_secret) is not set`);
      const pin =
        ctx === undefined ? await readIssuerPin(this.env, this.current.target, clientId) : await pinIssuer(this.env, this.current.target, clientId, ctx.issuer);
      if (pin !== undefined && ctx !== undefined) assertPinnedIssuer(this.current.target, pin, ctx.issuer, this.current.discovery);
      this.current.client = {
        client_id: clientId,
        ...(secret === undefined ? {} : { client_secret: secret }),
        ...(pin === undefined ? {} : { issuer: pin.issuer }),
      };
      return this.current.client;
    }
    if (this.current.client !== undefined) return this.current.client;
    const stored = await this.env.OAUTH_KV.get(await this.registrationKey());
    if (stored === null) return undefined;
    const parsed = storedClientSchema.safeParse(await this.cipher.open(stored, this.registrationContext()));
    if (!parsed.success) return undefined;
    this.current.client = parsed.data;
    return parsed.data;
  }

  /**
   * Keeps the SDK's issuer stamp: a registered client is sealed with it, and a pre-registered
   * one (answered unstamped only before its first use) is pinned to it.
   */
  async saveClientInformation(information: StoredOAuthClientInformation): Promise<void> {
    const parsed = storedClientSchema.parse(information);
    this.current.client = parsed;
    if (this.current.target.clientIdSecret !== undefined) {
      if (parsed.issuer !== undefined) await pinIssuer(this.env, this.current.target, parsed.client_id, parsed.issuer);
      return;
    }
    await this.env.OAUTH_KV.put(await this.registrationKey(), await this.cipher.seal(parsed, this.registrationContext()));
  }

  tokens(): StoredOAuthTokens | undefined {
    return this.current.tokens;
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    this.savedTokens = { ...tokens, token_type: tokens.token_type || "Bearer" };
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.authorizationUrl = authorizationUrl;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.current.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.current.verifier === undefined) throw new Error("no PKCE verifier for this sign-in");
    return this.current.verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.current.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.current.discovery;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    this.invalidated.add(scope);
    if (scope === "all" || scope === "tokens") this.current.tokens = undefined;
    if (scope === "all" || scope === "discovery") this.current.discovery = undefined;
    if ((scope === "all" || scope === "client") && this.current.target.clientIdSecret === undefined) {
      this.current.client = undefined;
      await this.env.OAUTH_KV.delete(await this.registrationKey());
    }
  }

  private registrationContext(): string {
    return `registration ${this.current.target.url} ${this.current.redirectUrl}`;
  }

  private registrationKey(): Promise<string> {
    return downstreamClientKey(this.current.target.url, this.current.redirectUrl);
  }
}
