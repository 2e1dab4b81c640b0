import { env, runInDurableObject } from "cloudflare:test";
import type { StoredClient, StoredTokens } from "../../../src/downstream/connections/connection-schema";
import { type ConnectionOwner, type ConnectionTarget, connectionsStub } from "../../../src/downstream/connections/connection-target";
import type { UserConnections } from "../../../src/downstream/connections/user-connections";

/** The object's private writer, reached inside the object as the callback path does after a sign-in. */
type Writer = {
  store(key: string, target: ConnectionTarget, tokens: StoredTokens, client: StoredClient, discovery: undefined, by: string, at: number): Promise<void>;
};

/**
 * Stores a connection in its owner's UserConnections as a finished sign-in does (sealed, keyed
 * by the server's URL), for tests that need one without an authorization server to sign in at.
 */
export async function storeConnection(
  owner: ConnectionOwner,
  target: ConnectionTarget,
  tokens: StoredTokens,
  { client, connectedBy, connectedAt = Date.now() }: { client: StoredClient; connectedBy: string; connectedAt?: number },
): Promise<void> {
  await runInDurableObject(connectionsStub(env, owner), async (instance: UserConnections) => {
    await (instance as unknown as Writer).store(new URL(target.url).href, target, tokens, client, undefined, connectedBy, connectedAt);
  });
}
