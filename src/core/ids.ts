// Snowflake ids (CONTRACT §2): 41-bit ms since 2020-01-01Z, 10-bit node, 12-bit sequence.

import type { Clock } from "./clock.js";

export const SNOWFLAKE_EPOCH_MS = Date.UTC(2020, 0, 1);
const NODE_BITS = 10n;
const SEQUENCE_BITS = 12n;
export const MAX_NODE = (1 << Number(NODE_BITS)) - 1;
const MAX_SEQUENCE = (1n << SEQUENCE_BITS) - 1n;

export interface IdGenerator {
  next(): bigint;
}

export function createIdGenerator(node: number, clock: Clock): IdGenerator {
  if (!Number.isInteger(node) || node < 0 || node > MAX_NODE) {
    throw new RangeError(`snowflake node must be an integer in 0..${MAX_NODE}, got ${node}`);
  }
  const nodePart = BigInt(node) << SEQUENCE_BITS;
  let lastMs = -1;
  let sequence = 0n;
  return {
    next(): bigint {
      // Never go backwards: a clock step back reuses the last millisecond's sequence space.
      let ms = Math.max(clock.now(), lastMs);
      if (ms === lastMs) {
        sequence = (sequence + 1n) & MAX_SEQUENCE;
        // Sequence exhausted within one millisecond: borrow the next millisecond.
        if (sequence === 0n) ms = lastMs + 1;
      } else {
        sequence = 0n;
      }
      lastMs = ms;
      return (BigInt(ms - SNOWFLAKE_EPOCH_MS) << (NODE_BITS + SEQUENCE_BITS)) | nodePart | sequence;
    },
  };
}

/** The creation time encoded in an id. */
export const idTimestampMs = (id: bigint): number =>
  Number(id >> (NODE_BITS + SEQUENCE_BITS)) + SNOWFLAKE_EPOCH_MS;
