/** @questhall/client: the TypeScript client of a Questhall gateway (docs/clients.md). */
export * from "./client.js";
export * from "./keys.js";
export * from "./socket.js";
export type { components, paths, operations } from "./api.js";
