import { PARTNER_DISPLAY_NAME, type Caller } from '../auth/caller.js';
import type { LogRecord } from '../ports/store/index.js';
import type { LogEntryBody } from '../schemas/session.js';
import type { ServiceContext } from '../service/context.js';

export type ActivityRoute = LogEntryBody['route'];
export type ActivityDirection = LogEntryBody['direction'];

/** Builds an activity entry for the caller; entries never carry message text. */
export function activityEntry(
  context: ServiceContext,
  caller: Caller,
  input: { agentId: string; threadId: string | null; route: ActivityRoute; direction?: ActivityDirection },
): Omit<LogRecord, 'logId'> {
  return {
    organizationId: caller.organizationId,
    agentId: input.agentId,
    threadId: input.threadId ?? '',
    userId: caller.subjectId,
    actorEmail: '',
    actorDisplayName: PARTNER_DISPLAY_NAME,
    direction: input.direction ?? 'user',
    route: input.route,
    requestId: caller.requestId,
    createdAt: context.nowIso(),
  };
}

export function presentLogEntry(record: LogRecord): LogEntryBody {
  return {
    log_id: record.logId,
    user_id: record.userId,
    actor_email: record.actorEmail,
    actor_display_name: record.actorDisplayName,
    direction: record.direction as ActivityDirection,
    route: record.route as ActivityRoute,
    created_at: record.createdAt,
    thread_id: record.threadId,
    request_id: record.requestId,
  };
}
