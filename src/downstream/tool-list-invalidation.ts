import { downstreamToolsPrefix } from "../storage-keys";
import { forgetRecentReads } from "./tool-list-cache";

/**
 * A skill has one cached list per server and config hash, and a server with `auth` one per member
 * (or the team) as well: 10 pages of 1,000 keys. Past that, the rest expire within the server's
 * tool_list_ttl_ms, and each was checked against the pins when it was listed.
 */
const MAX_PAGES = 10;

/**
 * Deletes every cached tool list of one server of one skill (all config hashes), so the next
 * listing asks the server and checks the pins again. KV deletes take up to about 60 s to reach
 * other locations, and warm sessions keep their in-memory list until its TTL: an accepted tool
 * reappears within the server's tool_list_ttl_ms, a withheld one never appears early.
 */
export async function invalidateToolLists(kv: KVNamespace, skill: string, serverId: string): Promise<number> {
  const prefix = downstreamToolsPrefix(skill, serverId);
  forgetRecentReads(kv, prefix);
  let deleted = 0;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const listed = await kv.list(cursor === undefined ? { prefix } : { prefix, cursor });
    await Promise.all(listed.keys.map((key) => kv.delete(key.name)));
    deleted += listed.keys.length;
    if (listed.list_complete) break;
    cursor = listed.cursor;
  }
  return deleted;
}
