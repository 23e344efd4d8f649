/**
 * Whether requests are queuing on the service thread: a second search in one turn of the event
 * loop means several requests were ready at once (each socket's request is read and, for a search
 * on this thread, answered within its own callback; a turn handles more than one only when more
 * than one was waiting). Searches use it to decide where to run (collection.ts `searchParallel`):
 * a lone search runs on the service thread, because a hand-off costs more than a small search;
 * but when requests queue, a heavy search holds up the ones waiting behind it, and it goes to a
 * search thread.
 *
 * Asking whether a search thread is busy is not enough: searches on the service thread run
 * synchronously, so under many clients every request found the threads idle and ran here. Two
 * other signals were measured in the serve bench and rejected: the event loop's utilisation (one
 * client's heavy filtered searches keep it high with nothing waiting: that client lost 10–28%),
 * and its idle time since the previous search (with one client the next request is often in the
 * socket already when the loop polls, so the loop does not idle, and a share of lone searches
 * went to threads).
 */
export class ServiceLoad {
  private searchedThisTurn = false;
  private readonly turnEnded = (): void => {
    this.searchedThisTurn = false;
  };

  /** Call once per search, as it starts: whether another search started earlier in this turn. */
  backlogged(): boolean {
    if (this.searchedThisTurn) return true;
    this.searchedThisTurn = true;
    setImmediate(this.turnEnded);
    return false;
  }
}
