// The placement notes the health hub keeps for isolates to catch up on (which server holds which
// conversation): the latest few thousand, numbered, and what one snapshot carries after a number.
import type { PlacementNews, PlacementNote } from "./health-report.ts";

/** Placement notes kept for isolates to catch up on, and the most one snapshot carries. */
const NOTES_KEPT = 4096;
const NOTES_PER_SNAPSHOT = 1024;

/** The latest placement notes, oldest first; `seq` numbers the last one. In memory only: a lost note costs a recompute. */
export class PlacementNotes {
  private notes: PlacementNote[] = [];
  private seq = 0;

  add(notes: readonly PlacementNote[]): void {
    for (const note of notes) {
      this.notes.push(note);
      this.seq++;
    }
    if (this.notes.length > NOTES_KEPT) this.notes.splice(0, this.notes.length - NOTES_KEPT);
  }

  /** The notes after `since` (a `seq` this hub gave before), at most NOTES_PER_SNAPSHOT of the latest. */
  after(since?: number): PlacementNews {
    // A `since` ahead of this hub's count is another instance's (the hub restarted): send what there is.
    const from = since === undefined || since > this.seq ? 0 : this.notes.length - (this.seq - since);
    const notes = this.notes.slice(Math.max(0, from, this.notes.length - NOTES_PER_SNAPSHOT));
    return { seq: this.seq, notes };
  }
}
