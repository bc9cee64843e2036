/**
 * How the MCP commands run until they are done: until the server closes by itself, or SIGINT or
 * SIGTERM closes it.
 */

/** Waits for `closed`, calling `close` on SIGINT/SIGTERM meanwhile. */
export const serveUntilClosed = async (server: { readonly closed: Promise<void>; readonly close: () => Promise<void> }): Promise<void> => {
  const stop = () => void server.close()
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
  try {
    await server.closed
  } finally {
    process.off("SIGINT", stop)
    process.off("SIGTERM", stop)
  }
}
