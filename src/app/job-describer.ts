// The failed run as its registration's webhook receives it: the JobView the REST API returns.

import { toJobView } from "../operations/views.js";
import type { Store } from "../store/db.js";
import { countTasksOfJob, findJobById } from "../store/jobs.js";

export const describeJobFor =
  (db: Store) =>
  async (jobId: bigint): Promise<ReturnType<typeof toJobView> | null> => {
    const row = await findJobById(db, jobId);
    return row ? toJobView(row, await countTasksOfJob(db, jobId)) : null;
  };
