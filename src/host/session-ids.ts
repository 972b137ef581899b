// Session ids as the host hands them out: `s<n>`, numbered across every model loaded (each engine
// starts after the last's), so a session of a replaced model never shares an id with the next's.

const SESSION_ID = /^s(\d+)$/;

/** The number in a session id `s<n>`, or null for anything else. */
export function sessionNumber(id: string): number | null {
  const m = SESSION_ID.exec(id);
  return m ? Number(m[1]) : null;
}
