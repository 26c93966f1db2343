// The page's link: `#serve=<token>` (the serve credential), and optionally `&model=<id>&start=1` (load
// that model and start serving without a click: a spare machine's browser as a serving node). The
// fragment leaves the address bar at once; the token and the start request stay in sessionStorage,
// so a reload of the tab (a crash, a restored session) serves again.

export interface ServeLink {
  /** The serve credential, or null: this tab cannot serve. */
  token: string | null;
  /** The model the link names (loaded and served at once when `start`). */
  model: string | null;
  start: boolean;
}

/** The parts of sessionStorage and history this reads (structural: no DOM types needed). */
interface Store {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}
interface Address {
  replaceState(data: unknown, unused: string, url?: string | null): void;
}

const TOKEN_KEY = "switchyard.serve";
const START_KEY = "switchyard.start";

/**
 * Pure but for the storage and history it is given (sessionStorage, history): reads the fragment of
 * `where` (the page's location), stores what it carries, removes it from the address bar, and returns
 * what this tab was asked to do.
 */
export function readServeLink(where: { hash: string; pathname: string; search: string }, storage: Store, history: Address): ServeLink {
  const params = new URLSearchParams(where.hash.replace(/^#/, ""));
  const token = params.get("serve");
  if (token) {
    storage.setItem(TOKEN_KEY, token);
    const model = params.get("model");
    if (model && params.get("start") === "1") storage.setItem(START_KEY, model);
    else storage.removeItem(START_KEY);
    history.replaceState(null, "", where.pathname + where.search);
  }
  const start = storage.getItem(START_KEY);
  return { token: storage.getItem(TOKEN_KEY), model: start ?? (token ? params.get("model") : null), start: start !== null };
}
