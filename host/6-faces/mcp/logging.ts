// The client's logging level (`logging/setLevel`) and how a guest's log line becomes an MCP
// `notifications/message`: guest levels mapped onto MCP's syslog levels, filtered at the level.
import type { LoggingLevel, LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';

/** MCP's levels, least severe first (RFC 5424 order). */
export const MCP_LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** The level in force before a client sends `logging/setLevel`: info, so debug lines stay quiet. */
export const DEFAULT_LOG_LEVEL: LoggingLevel = 'info';

const severity = (level: LoggingLevel): number => MCP_LEVELS.indexOf(level);

/** The MCP level of a guest log line (`log.emit` levels: debug, info, warn, error). */
export function mcpLevelOf(guestLevel: string): LoggingLevel {
  switch (guestLevel) {
    case 'debug':
      return 'debug';
    case 'warn':
      return 'warning';
    case 'error':
      return 'error';
    default:
      return 'info';
  }
}

/** The client's threshold: messages below it are not sent. */
export class LogLevelGate {
  #level: LoggingLevel;

  constructor(level: LoggingLevel = DEFAULT_LOG_LEVEL) {
    this.#level = level;
  }

  get level(): LoggingLevel {
    return this.#level;
  }

  set(level: LoggingLevel): void {
    this.#level = level;
  }

  /** Whether a message at `level` reaches the client. */
  allows(level: LoggingLevel): boolean {
    return severity(level) >= severity(this.#level);
  }

  /** Whether any guest line (at most `error`) can reach the client; if not, calls skip the log plumbing. */
  allowsGuestLines(): boolean {
    return this.allows('error');
  }
}

/** One guest log line as it leaves the broker. */
export interface GuestLogLine {
  readonly level: string;
  readonly event: string;
  readonly fields: Record<string, unknown>;
}

/** The notification for a guest's line; `data` names the tool, the run and the call. */
export function logNotification(
  line: GuestLogLine,
  ids: { tool_id: string; run_id: string | null; call_id: string },
): LoggingMessageNotification {
  return {
    method: 'notifications/message',
    params: {
      level: mcpLevelOf(line.level),
      logger: ids.tool_id,
      data: { tool_id: ids.tool_id, run_id: ids.run_id, call_id: ids.call_id, event: line.event, fields: line.fields },
    },
  };
}
