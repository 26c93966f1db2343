// A Responses answer's output as it is built: its items in order and the numbered stream events
// that tell of them (what the encoder's item builders share).
type Json = Record<string, unknown>;

/** One Responses stream event: `type` is also the SSE `event:` name. */
export interface ResponseStreamEvent extends Json {
  type: string;
  sequence_number: number;
}

/** The output items so far (each replaced by its done form when it closes) and the events' numbering. */
export class ResponseOutput {
  readonly items: Json[] = [];
  private seq = 0;

  /** The next stream event, numbered in the order it is made. */
  ev(type: string, body: Json): ResponseStreamEvent {
    return { type, sequence_number: this.seq++, ...body };
  }
}
