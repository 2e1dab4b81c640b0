import type { CatalogInput } from "../../../src/catalog/catalog-schema";

/**
 * Loads a catalog into the running Worker through its admin API (`PUT /admin/api/catalog`),
 * which in local development accepts the loopback dev user. Throws with the Worker's list of
 * problems when the catalog is refused.
 */
export async function loadCatalog(baseUrl: string, catalog: CatalogInput, headers: Record<string, string> = {}): Promise<void> {
  const response = await fetch(`${baseUrl}/admin/api/catalog`, {
    method: "PUT",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(catalog),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`PUT /admin/api/catalog answered ${response.status}: ${text.slice(0, 3000)}`);
}
