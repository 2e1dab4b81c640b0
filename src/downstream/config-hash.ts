import type { DownstreamServerConfig } from "../catalog/catalog-schema";
import { canonicalJson, sha256Hex } from "./canonical-json";

/**
 * A short stable hash of a server's configuration (key order does not matter). Headers are
 * hashed as configured, `${NAME}` templates and all, so no secret value feeds the hash.
 */
export async function serverConfigHash(config: DownstreamServerConfig): Promise<string> {
  return (await sha256Hex(canonicalJson(config))).slice(0, 24);
}
