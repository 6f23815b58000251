// Cursor paging: the cursors of the pages seen so far make "Previous" possible without offsets.

import { useState } from "react";

export interface PagerState {
  cursor: string | null;
  page: number;
  next(cursor: string): void;
  previous(): void;
  reset(): void;
}

export function usePager(): PagerState {
  const [stack, setStack] = useState<(string | null)[]>([null]);
  return {
    cursor: stack.at(-1) ?? null,
    page: stack.length,
    next: (cursor) => setStack((s) => [...s, cursor]),
    previous: () => setStack((s) => (s.length > 1 ? s.slice(0, -1) : s)),
    reset: () => setStack([null]),
  };
}

export function Pager({ pager, nextCursor, total, shown }: { pager: PagerState; nextCursor: string | null; total: number; shown: number }) {
  return (
    <nav className="pager" aria-label="Pages">
      <span className="muted">
        Page {pager.page} · {shown} shown of {total.toLocaleString("en-US")}
      </span>
      <button type="button" onClick={pager.previous} disabled={pager.page === 1}>
        Previous page
      </button>
      <button type="button" onClick={() => nextCursor && pager.next(nextCursor)} disabled={nextCursor === null}>
        Next page
      </button>
    </nav>
  );
}
