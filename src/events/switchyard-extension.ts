/** The `x_switchyard` body extension (design Contracts). */
export interface SwitchyardExtension {
  target: string;
  attempts: number;
  timings?: { first_event_ms: number; total_ms: number };
  tool_calls?: Array<{ index: number; id: string; score: number; problems: unknown[] }>;
  policy?: string;
  /** Where the answer was continued on another target after its upstream failed mid-answer (docs/reliability.md). */
  resumes?: Array<{ from: string; to: string; code: string; after_chars: number; after_tokens: number }>;
  /** Responses API: the request's tools the model was not offered (hosted tools Switchyard cannot run). */
  dropped_tools?: Array<{ index: number; type: string; namespace?: string }>;
}
