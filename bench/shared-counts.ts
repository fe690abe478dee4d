/** What a gateway child reports when its load is done (one JSON line on stdout). */
export interface Counts {
  sent: number;
  /** Answers from the upstream by status. */
  status: Record<string, number>;
  /** Refused locally, by shed reason. */
  shed: Record<string, number>;
  /** Requests that failed on the way (connection, timeout). */
  errors: number;
  storeEvents: string[];
}
