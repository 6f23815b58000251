// Reads and writes through TanStack Query. Every read refetches every 2 s while its tab is visible
// (SPEC), set once on the QueryClient; a write refetches everything once it lands.

import { QueryClient, keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ApiError } from "./client.js";
import { type Params, searchOf } from "../lib/route.js";
import { useSession } from "./context.js";

export const POLL_MS = 2000;

/** A refusal asking again will not change: a 4xx other than a timeout or too many requests. */
export const isPermanent = (error: unknown): boolean =>
  error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429;

/** Polls every `ms` until the server refused for good (a bad id in the address is not polled forever). */
const pollUnlessRefused = (ms: number | false) => (query: { state: { error: unknown } }) => (isPermanent(query.state.error) ? false : ms);

/** Polls every `ms` until the first answer: for what cannot change once read (a finished attempt's log). */
const pollUntilRead = (ms: number) => (query: { state: { error: unknown; data: unknown } }) => (isPermanent(query.state.error) || query.state.data !== undefined ? false : ms);

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        refetchInterval: pollUnlessRefused(POLL_MS),
        refetchIntervalInBackground: false,
        placeholderData: keepPreviousData,
        // A 4xx will not change by asking again; a dropped connection or a 5xx might.
        retry: (failures, error) => failures < 2 && (!(error instanceof ApiError) || error.status === 0 || error.status >= 500),
      },
    },
  });
}

/** A GET of the REST API, keyed by its path (so one resource is fetched once however many views ask). */
/** `untilRead`: stop polling once an answer came (a failed read is still asked again). */
export function useApiQuery<T>(path: string | null, options: { refetchInterval?: number | false; untilRead?: boolean } = {}) {
  const { client } = useSession();
  const interval = options.refetchInterval ?? POLL_MS;
  return useQuery<T, ApiError>({
    queryKey: [path],
    queryFn: () => client.request<T>("GET", path!),
    enabled: path !== null,
    ...(options.untilRead && interval !== false
      ? { refetchInterval: pollUntilRead(interval) }
      : options.refetchInterval !== undefined
        ? { refetchInterval: pollUnlessRefused(options.refetchInterval) }
        : {}),
  });
}

/** A POST/PUT/DELETE; on success every query refetches (a cancel changes the job, its tasks, the lists). */
export function useApiMutation<TInput, TOutput = unknown>(method: string, path: (input: TInput) => string, body?: (input: TInput) => unknown) {
  const { client } = useSession();
  const queryClient = useQueryClient();
  return useMutation<TOutput, ApiError, TInput>({
    mutationFn: (input) => client.request<TOutput>(method, path(input), body ? body(input) : undefined),
    onSettled: () => queryClient.invalidateQueries(),
  });
}

/** `?a=1&b=x` from the parameters that are set; "" when none is. */
export function queryString(params: Params): string {
  const text = searchOf(params);
  return text === "" ? "" : `?${text}`;
}
