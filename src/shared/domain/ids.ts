/** Identifiers of the domain. Plain strings at runtime; the names say what they identify. */
export type TaskId = string;
export type ToolCallId = string;
export type PermissionRequestId = string;
export type ViewId = string;
