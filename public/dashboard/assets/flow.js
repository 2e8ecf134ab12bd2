// The two ways a page keeps what it shows current when answers come back out of order.
// coalescing: a refetch asked for while one runs becomes one more run right after it (the
// roster, a guest's page). latestWins: each new question supersedes the ones before, and an
// answer to a superseded question is dropped (filters typed faster than the server answers).

/**
 * Runs `fetch` now; a call while it runs is coalesced into one more run right after it (no
 * timer), so a burst of calls costs at most two fetches and the last one sees the latest.
 * `run({ background: true })` is a refetch the page makes by itself (after a live event):
 * `fetch({ background })` gets true only when every call a run stands for was one, so a
 * coalesced fetch counts as the user's if any of its callers was the user (docs/dashboard.md,
 * "Security": a background refetch does not keep the session alive).
 */
export function coalescing(fetch) {
  let inFlight = null;
  let again = false;
  let background = false;
  return {
    run({ background: quiet = false } = {}) {
      background = inFlight ? background && quiet : quiet;
      if (inFlight) {
        again = true;
        return inFlight;
      }
      inFlight = (async () => {
        try {
          do {
            again = false;
            await fetch({ background });
          } while (again);
        } finally {
          inFlight = null;
        }
      })();
      return inFlight;
    },
  };
}

/**
 * Latest answer wins. `ask()` starts a new question and returns `isCurrent()`, which stays true
 * until the next `ask()`; `askMore()` continues the current question (the next page of the
 * same list) and is superseded the same way:
 *
 *   const isCurrent = latest.ask();
 *   const data = await api.get(...);
 *   if (!isCurrent()) return;
 */
export function latestWins() {
  let seq = 0;
  const ticket = (mine) => () => mine === seq;
  return {
    ask: () => ticket(++seq),
    askMore: () => ticket(seq),
  };
}
