// Cursor paging: the cursors of the pages seen so far make "Previous" possible without offsets.
// They are kept in the address (`pages=c1.c2`), so a reload or a shared link shows the same page.

import { useSearchParam } from "../lib/route.js";

export interface PagerState {
  cursor: string | null;
  page: number;
  next(cursor: string): void;
  previous(): void;
  reset(): void;
}

/** Cursors are base64url (no "."): the stack of pages after the first, joined by dots. */
export function usePager(): PagerState {
  const [pages, setPages] = useSearchParam("pages");
  const stack = pages ? pages.split(".").filter((c) => c !== "") : [];
  return {
    cursor: stack.at(-1) ?? null,
    page: stack.length + 1,
    next: (cursor) => setPages([...stack, cursor].join(".")),
    previous: () => setPages(stack.slice(0, -1).join(".")),
    reset: () => {
      if (stack.length > 0) setPages(null);
    },
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
