import { TOKEN_MEMO_MS } from "./token-source";

/**
 * Which ExpertSessions a UserConnections object handed a token to and may still hold it in
 * memory (`token_holders`, connection-schema.ts), so that ending a connection reaches them: a
 * session memoises a token for TOKEN_MEMO_MS (token-source.ts) to spare a warm call the hop
 * here, and without being told it would keep using a removed connection that long.
 */
export class TokenHolders {
  constructor(
    private readonly sql: SqlStorage,
    /** The binding, not the class: this layer sits below the sessions and knows them only as the Worker's Env types them. */
    private readonly sessions: Env["EXPERT_SESSION"],
  ) {}

  /**
   * Notes that `holder` (an ExpertSession's id, hex) was handed the token of `key`. Written only
   * when a session's memo is cold (once per TOKEN_MEMO_MS a session), so the rows stay few:
   * those past their time go with each write.
   */
  record(key: string, holder: string): void {
    const now = Date.now();
    this.sql.exec(`DELETE FROM token_holders WHERE until <= ?`, now);
    this.sql.exec(`INSERT OR REPLACE INTO token_holders (server_key, holder, until) VALUES (?, ?, ?)`, key, holder, now + TOKEN_MEMO_MS);
  }

  /**
   * Tells the sessions that may still hold a token of `keys` to forget it, so a removal takes
   * effect on their next call. Awaited by the removal, so whoever removed it is answered only
   * once it no longer works. A session that cannot be told (an id that is not one, an RPC that
   * fails) keeps its memo at most TOKEN_MEMO_MS longer.
   */
  async tell(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    const now = Date.now();
    const told = new Map<string, string[]>();
    for (const key of keys) {
      const rows = this.sql.exec<{ holder: string; until: number }>(`DELETE FROM token_holders WHERE server_key = ? RETURNING holder, until`, key).toArray();
      for (const row of rows) if (row.until > now) told.set(row.holder, [...(told.get(row.holder) ?? []), key]);
    }
    await Promise.allSettled([...told].map(async ([holder, held]) => this.sessions.get(this.sessions.idFromString(holder)).forgetConnectionTokens(held)));
  }
}
