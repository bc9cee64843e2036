/** What SQLite's errors mean, in words a user can act on. */

const SQLITE_BUSY = 5
const SQLITE_LOCKED = 6
const SQLITE_READONLY = 8
const SQLITE_CORRUPT = 11
const SQLITE_FULL = 13
const SQLITE_CANTOPEN = 14
const SQLITE_NOTADB = 26

const primaryCode = (cause: unknown): number | undefined => {
  const code = (cause as { errcode?: unknown } | null)?.errcode
  return typeof code === "number" ? code & 0xff : undefined
}

export const isBusy = (cause: unknown): boolean => {
  const code = primaryCode(cause)
  return code === SQLITE_BUSY || code === SQLITE_LOCKED
}

export const messageOf = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/** A SQLite error as one line: what it means (locked, read-only, not a database, …) and SQLite's message. */
export const describeError = (cause: unknown, busyTimeoutMs: number): string => {
  switch (primaryCode(cause)) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return `the database is locked by another connection (waited ${busyTimeoutMs} ms): ${messageOf(cause)}`
    case SQLITE_READONLY:
      return `the database is read-only: ${messageOf(cause)}`
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return `the file is not a SQLite database or is corrupt: ${messageOf(cause)}`
    case SQLITE_FULL:
      return `the disk is full: ${messageOf(cause)}`
    case SQLITE_CANTOPEN:
      return `cannot open the file: ${messageOf(cause)}`
    default:
      return messageOf(cause)
  }
}
