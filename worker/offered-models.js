// The models this deployment offers to tabs (its browser targets: GGUF files, self-hosted web-llm
// records, web-llm model ids; and a GGUF the launcher runs), from GET /v1/sessions/models with the
// page's serve credential.

/**
 * `gguf`: a GGUF file for llama.cpp; `mlc`: a self-hosted web-llm model (its folder and library);
 * neither: a model of web-llm's prebuilt list.
 * @typedef {{ model: string, gguf?: string, mlc?: { url: string, lib: string } }} OfferedModel
 */

/**
 * @param {string} baseUrl the Switchyard origin
 * @param {string} token the serve credential
 * @returns {Promise<OfferedModel[]>}
 */
export async function fetchOfferedModels(baseUrl, token) {
  const res = await fetch(`${baseUrl}/v1/sessions/models`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) {
    /** @type {{ error?: { message?: string } }} */
    const body = await res.json().catch(() => ({}));
    throw new Error(body.error?.message ?? `HTTP ${res.status}`);
  }
  /** @type {{ data?: unknown }} */
  const body = await res.json();
  if (!Array.isArray(body.data)) return [];
  return body.data.filter(
    /** @returns {m is OfferedModel} */ (m) =>
      !!m && typeof m === "object" && typeof m.model === "string" && (m.gguf === undefined || typeof m.gguf === "string") && (m.mlc === undefined || isMlc(m.mlc)),
  );
}

/** @param {unknown} mlc */
const isMlc = (mlc) => !!mlc && typeof mlc === "object" && "url" in mlc && typeof mlc.url === "string" && "lib" in mlc && typeof mlc.lib === "string";
