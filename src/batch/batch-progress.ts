// A batch not finished yet as the status page shows it (GET /v1/admin/status, public/status.html): a
// type only, so the page's build can read it.
import type { Batch } from "./batch-object.ts";

export interface BatchProgress {
  /** The key's name; null for open mode's batches without a credential. */
  key: string | null;
  id: string;
  status: Batch["status"];
  endpoint: string;
  model: string | null;
  request_counts: Batch["request_counts"];
  created_at: number;
  expires_at: number | null;
}
