// The body of a list view: loading, the error (while no earlier page is shown), the empty state, or
// the rows with the pager under them. Each list view gives only its empty state and its table.

import type { UseQueryResult } from "@tanstack/react-query";
import type { ReactNode } from "react";
import type { PageOf } from "../../../src/models/index.js";
import type { ApiError } from "../api/client.js";
import { Pager, type PagerState } from "./Pager.js";
import { ErrorState, Loading } from "./States.js";

interface PagedListProps<T> {
  query: UseQueryResult<PageOf<T>, ApiError>;
  what: string;
  pager: PagerState;
  empty: ReactNode;
  children(items: T[]): ReactNode;
}

export function PagedList<T>({ query, what, pager, empty, children }: PagedListProps<T>) {
  if (query.isPending) return <Loading what={what} />;
  if (query.isError && !query.data) return <ErrorState error={query.error} what={what} />;
  const page = query.data!;
  if (page.items.length === 0) return <>{empty}</>;
  return (
    <>
      <div className="table-wrap">{children(page.items)}</div>
      <Pager pager={pager} nextCursor={page.next_cursor} total={page.total} shown={page.items.length} />
    </>
  );
}
