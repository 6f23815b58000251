// Where the test run finds the distributed backend's services.

export const PG_URL = process.env.JOBHOUSE_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
export const CH_URL = process.env.JOBHOUSE_TEST_CH_URL ?? "http://127.0.0.1:8123";
