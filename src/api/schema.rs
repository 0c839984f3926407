//! The messages of the API as a table the binary codec reads (`protocol::protobuf`): every
//! message of `proto/svc/api/v1/actiond.proto` with its fields' names, numbers, kinds and
//! labels, and the request and answer message of each operation. It must say what the proto
//! says; a unit test reads the proto file and compares the two, field by field, so a field
//! added to one and not the other fails the build's tests. Hand-kept rather than generated:
//! the table and one generic encoder cost less binary than generated types per message
//! (docs/ARCHITECTURE.md, "The binary codec").

use super::routes::Op;
use crate::protocol::protobuf::{Field, Kind as K, Label::*, Message};

/// One field: number, proto name, JSON name, kind, label.
macro_rules! f {
    ($number:literal, $name:literal, $json:literal, $kind:expr, $label:expr) => {
        Field {
            number: $number,
            name: $name,
            json: $json,
            kind: $kind,
            label: $label,
        }
    };
}

/// The request and answer messages of an operation, as the service in the proto declares.
pub fn messages(op: Op) -> (&'static Message, &'static Message) {
    match op {
        Op::GetDashboard => (&GET_DASHBOARD_REQUEST, &GET_DASHBOARD_RESPONSE),
        Op::StartAction => (&START_ACTION_REQUEST, &START_ACTION_RESPONSE),
        Op::StartActionAndWait => (
            &START_ACTION_AND_WAIT_REQUEST,
            &START_ACTION_AND_WAIT_RESPONSE,
        ),
        Op::StartActionByGet => (&START_ACTION_BY_GET_REQUEST, &START_ACTION_BY_GET_RESPONSE),
        Op::StartActionByGetAndWait => (
            &START_ACTION_BY_GET_AND_WAIT_REQUEST,
            &START_ACTION_BY_GET_AND_WAIT_RESPONSE,
        ),
        Op::RestartAction => (&RESTART_ACTION_REQUEST, &START_ACTION_RESPONSE),
        Op::KillAction => (&KILL_ACTION_REQUEST, &KILL_ACTION_RESPONSE),
        Op::ExecutionStatus => (&EXECUTION_STATUS_REQUEST, &EXECUTION_STATUS_RESPONSE),
        Op::GetLogs => (&GET_LOGS_REQUEST, &GET_LOGS_RESPONSE),
        Op::GetActionLogs => (&GET_ACTION_LOGS_REQUEST, &GET_ACTION_LOGS_RESPONSE),
        Op::ValidateArgumentType => (
            &VALIDATE_ARGUMENT_TYPE_REQUEST,
            &VALIDATE_ARGUMENT_TYPE_RESPONSE,
        ),
        Op::WhoAmI => (&WHO_AM_I_REQUEST, &WHO_AM_I_RESPONSE),
        Op::SosReport => (&SOS_REPORT_REQUEST, &SOS_REPORT_RESPONSE),
        Op::DumpVars => (&DUMP_VARS_REQUEST, &DUMP_VARS_RESPONSE),
        Op::DumpPublicIdActionMap => (
            &DUMP_PUBLIC_ID_ACTION_MAP_REQUEST,
            &DUMP_PUBLIC_ID_ACTION_MAP_RESPONSE,
        ),
        Op::GetReadyz => (&GET_READYZ_REQUEST, &GET_READYZ_RESPONSE),
        Op::LocalUserLogin => (&LOCAL_USER_LOGIN_REQUEST, &LOCAL_USER_LOGIN_RESPONSE),
        Op::PasswordHash => (&PASSWORD_HASH_REQUEST, &PASSWORD_HASH_RESPONSE),
        Op::Logout => (&LOGOUT_REQUEST, &LOGOUT_RESPONSE),
        Op::EventStream => (&EVENT_STREAM_REQUEST, &EVENT_STREAM_RESPONSE),
        Op::GetDiagnostics => (&GET_DIAGNOSTICS_REQUEST, &GET_DIAGNOSTICS_RESPONSE),
        Op::Init => (&INIT_REQUEST, &INIT_RESPONSE),
        Op::GetActionBinding => (&GET_ACTION_BINDING_REQUEST, &GET_ACTION_BINDING_RESPONSE),
        Op::GetEntities => (&GET_ENTITIES_REQUEST, &GET_ENTITIES_RESPONSE),
        Op::GetEntity => (&GET_ENTITY_REQUEST, &ENTITY),
    }
}

/// Every message of the table, by name, reached from the operations (for the tests).
#[cfg(test)]
pub fn every_message() -> std::collections::BTreeMap<&'static str, &'static Message> {
    fn visit(
        m: &'static Message,
        seen: &mut std::collections::BTreeMap<&'static str, &'static Message>,
    ) {
        if seen.insert(m.name, m).is_some() {
            return;
        }
        for f in m.fields {
            if let K::Message(inner) | K::Map(inner) = f.kind {
                visit(inner, seen);
            }
        }
    }
    let mut seen = std::collections::BTreeMap::new();
    for (_, op) in super::routes::OPS {
        let (request, answer) = messages(op);
        visit(request, &mut seen);
        visit(answer, &mut seen);
    }
    seen
}

// The table, in the proto's order; map entries (which protobuf makes messages of) last.

pub static ACTION: Message = Message {
    name: "Action",
    fields: &[
        f!(1, "binding_id", "bindingId", K::String, Single),
        f!(2, "title", "title", K::String, Single),
        f!(3, "icon", "icon", K::String, Single),
        f!(4, "can_exec", "canExec", K::Bool, Single),
        f!(
            5,
            "arguments",
            "arguments",
            K::Message(&ACTION_ARGUMENT),
            Repeated
        ),
        f!(6, "popup_on_start", "popupOnStart", K::String, Single),
        f!(7, "order", "order", K::Int32, Single),
        f!(8, "timeout", "timeout", K::Int32, Single),
    ],
};

pub static ACTION_ARGUMENT: Message = Message {
    name: "ActionArgument",
    fields: &[
        f!(1, "name", "name", K::String, Single),
        f!(2, "title", "title", K::String, Single),
        f!(3, "type", "type", K::String, Single),
        f!(4, "default_value", "defaultValue", K::String, Single),
        f!(
            5,
            "choices",
            "choices",
            K::Message(&ACTION_ARGUMENT_CHOICE),
            Repeated
        ),
        f!(6, "description", "description", K::String, Single),
        f!(
            7,
            "suggestions",
            "suggestions",
            K::Map(&ACTION_ARGUMENT_SUGGESTIONS_ENTRY),
            Repeated
        ),
    ],
};

pub static ACTION_ARGUMENT_CHOICE: Message = Message {
    name: "ActionArgumentChoice",
    fields: &[
        f!(1, "value", "value", K::String, Single),
        f!(2, "title", "title", K::String, Single),
    ],
};

pub static ACTION_ENTITY_PAIR: Message = Message {
    name: "ActionEntityPair",
    fields: &[
        f!(1, "action_title", "actionTitle", K::String, Single),
        f!(2, "entity_prefix", "entityPrefix", K::String, Single),
    ],
};

pub static ADDITIONAL_LINK: Message = Message {
    name: "AdditionalLink",
    fields: &[
        f!(1, "title", "title", K::String, Single),
        f!(2, "url", "url", K::String, Single),
    ],
};

pub static DASHBOARD: Message = Message {
    name: "Dashboard",
    fields: &[
        f!(1, "title", "title", K::String, Single),
        f!(
            2,
            "contents",
            "contents",
            K::Message(&DASHBOARD_COMPONENT),
            Repeated
        ),
    ],
};

pub static DASHBOARD_COMPONENT: Message = Message {
    name: "DashboardComponent",
    fields: &[
        f!(1, "title", "title", K::String, Single),
        f!(2, "type", "type", K::String, Single),
        f!(
            3,
            "contents",
            "contents",
            K::Message(&DASHBOARD_COMPONENT),
            Repeated
        ),
        f!(4, "icon", "icon", K::String, Single),
        f!(5, "css_class", "cssClass", K::String, Single),
        f!(6, "action", "action", K::Message(&ACTION), Single),
    ],
};

pub static EFFECTIVE_POLICY: Message = Message {
    name: "EffectivePolicy",
    fields: &[
        f!(1, "show_diagnostics", "showDiagnostics", K::Bool, Single),
        f!(2, "show_log_list", "showLogList", K::Bool, Single),
    ],
};

pub static ENTITY: Message = Message {
    name: "Entity",
    fields: &[
        f!(1, "title", "title", K::String, Single),
        f!(2, "unique_key", "uniqueKey", K::String, Single),
        f!(3, "type", "type", K::String, Single),
    ],
};

pub static ENTITY_DEFINITION: Message = Message {
    name: "EntityDefinition",
    fields: &[
        f!(1, "title", "title", K::String, Single),
        f!(2, "instances", "instances", K::Message(&ENTITY), Repeated),
        f!(
            3,
            "used_on_dashboards",
            "usedOnDashboards",
            K::String,
            Repeated
        ),
    ],
};

pub static EXECUTION_ARGUMENT: Message = Message {
    name: "ExecutionArgument",
    fields: &[
        f!(1, "name", "name", K::String, Single),
        f!(2, "value", "value", K::String, Single),
    ],
};

pub static LOG_ENTRY: Message = Message {
    name: "LogEntry",
    fields: &[
        f!(1, "datetime_started", "datetimeStarted", K::String, Single),
        f!(
            2,
            "datetime_finished",
            "datetimeFinished",
            K::String,
            Single
        ),
        f!(3, "action_title", "actionTitle", K::String, Single),
        f!(4, "action_id", "actionId", K::String, Single),
        f!(5, "action_icon", "actionIcon", K::String, Single),
        f!(6, "stdout", "stdout", K::String, Single),
        f!(7, "stderr", "stderr", K::String, Single),
        f!(8, "timed_out", "timedOut", K::Bool, Single),
        f!(9, "exit_code", "exitCode", K::Int32, Single),
        f!(10, "user", "user", K::String, Single),
        f!(11, "user_class", "userClass", K::String, Single),
        f!(12, "tags", "tags", K::String, Repeated),
        f!(
            13,
            "execution_tracking_id",
            "executionTrackingId",
            K::String,
            Single
        ),
        f!(14, "execution_started", "executionStarted", K::Bool, Single),
        f!(
            15,
            "execution_finished",
            "executionFinished",
            K::Bool,
            Single
        ),
        f!(16, "blocked", "blocked", K::Bool, Single),
    ],
};

pub static GET_DASHBOARD_REQUEST: Message = Message {
    name: "GetDashboardRequest",
    fields: &[f!(1, "title", "title", K::String, Single)],
};

pub static GET_DASHBOARD_RESPONSE: Message = Message {
    name: "GetDashboardResponse",
    fields: &[
        f!(1, "title", "title", K::String, Single),
        f!(2, "dashboard", "dashboard", K::Message(&DASHBOARD), Single),
    ],
};

pub static START_ACTION_REQUEST: Message = Message {
    name: "StartActionRequest",
    fields: &[
        f!(1, "action_id", "actionId", K::String, Single),
        f!(
            2,
            "arguments",
            "arguments",
            K::Message(&EXECUTION_ARGUMENT),
            Repeated
        ),
        f!(
            3,
            "unique_tracking_id",
            "uniqueTrackingId",
            K::String,
            Single
        ),
        f!(4, "binding_id", "bindingId", K::String, Single),
    ],
};

pub static START_ACTION_RESPONSE: Message = Message {
    name: "StartActionResponse",
    fields: &[f!(
        1,
        "execution_tracking_id",
        "executionTrackingId",
        K::String,
        Single
    )],
};

pub static START_ACTION_AND_WAIT_REQUEST: Message = Message {
    name: "StartActionAndWaitRequest",
    fields: &[
        f!(1, "action_id", "actionId", K::String, Single),
        f!(
            2,
            "arguments",
            "arguments",
            K::Message(&EXECUTION_ARGUMENT),
            Repeated
        ),
        f!(
            3,
            "unique_tracking_id",
            "uniqueTrackingId",
            K::String,
            Single
        ),
        f!(4, "binding_id", "bindingId", K::String, Single),
    ],
};

pub static START_ACTION_AND_WAIT_RESPONSE: Message = Message {
    name: "StartActionAndWaitResponse",
    fields: &[f!(
        1,
        "log_entry",
        "logEntry",
        K::Message(&LOG_ENTRY),
        Single
    )],
};

pub static START_ACTION_BY_GET_REQUEST: Message = Message {
    name: "StartActionByGetRequest",
    fields: &[f!(1, "action_id", "actionId", K::String, Single)],
};

pub static START_ACTION_BY_GET_RESPONSE: Message = Message {
    name: "StartActionByGetResponse",
    fields: &[f!(
        1,
        "execution_tracking_id",
        "executionTrackingId",
        K::String,
        Single
    )],
};

pub static START_ACTION_BY_GET_AND_WAIT_REQUEST: Message = Message {
    name: "StartActionByGetAndWaitRequest",
    fields: &[f!(1, "action_id", "actionId", K::String, Single)],
};

pub static START_ACTION_BY_GET_AND_WAIT_RESPONSE: Message = Message {
    name: "StartActionByGetAndWaitResponse",
    fields: &[f!(
        1,
        "log_entry",
        "logEntry",
        K::Message(&LOG_ENTRY),
        Single
    )],
};

pub static RESTART_ACTION_REQUEST: Message = Message {
    name: "RestartActionRequest",
    fields: &[f!(
        1,
        "execution_tracking_id",
        "executionTrackingId",
        K::String,
        Single
    )],
};

pub static KILL_ACTION_REQUEST: Message = Message {
    name: "KillActionRequest",
    fields: &[f!(
        1,
        "execution_tracking_id",
        "executionTrackingId",
        K::String,
        Single
    )],
};

pub static KILL_ACTION_RESPONSE: Message = Message {
    name: "KillActionResponse",
    fields: &[
        f!(
            1,
            "execution_tracking_id",
            "executionTrackingId",
            K::String,
            Single
        ),
        f!(2, "killed", "killed", K::Bool, Single),
        f!(3, "already_completed", "alreadyCompleted", K::Bool, Single),
        f!(4, "found", "found", K::Bool, Single),
    ],
};

pub static EXECUTION_STATUS_REQUEST: Message = Message {
    name: "ExecutionStatusRequest",
    fields: &[
        f!(
            1,
            "execution_tracking_id",
            "executionTrackingId",
            K::String,
            Single
        ),
        f!(2, "action_id", "actionId", K::String, Single),
    ],
};

pub static EXECUTION_STATUS_RESPONSE: Message = Message {
    name: "ExecutionStatusResponse",
    fields: &[f!(
        1,
        "log_entry",
        "logEntry",
        K::Message(&LOG_ENTRY),
        Single
    )],
};

pub static GET_LOGS_REQUEST: Message = Message {
    name: "GetLogsRequest",
    fields: &[f!(1, "start_offset", "startOffset", K::Int64, Single)],
};

pub static GET_LOGS_RESPONSE: Message = Message {
    name: "GetLogsResponse",
    fields: &[
        f!(1, "logs", "logs", K::Message(&LOG_ENTRY), Repeated),
        f!(2, "count_remaining", "countRemaining", K::Int64, Single),
        f!(3, "page_size", "pageSize", K::Int64, Single),
        f!(4, "total_count", "totalCount", K::Int64, Single),
        f!(5, "start_offset", "startOffset", K::Int64, Single),
    ],
};

pub static GET_ACTION_LOGS_REQUEST: Message = Message {
    name: "GetActionLogsRequest",
    fields: &[
        f!(1, "action_id", "actionId", K::String, Single),
        f!(2, "start_offset", "startOffset", K::Int64, Single),
    ],
};

pub static GET_ACTION_LOGS_RESPONSE: Message = Message {
    name: "GetActionLogsResponse",
    fields: &[
        f!(1, "logs", "logs", K::Message(&LOG_ENTRY), Repeated),
        f!(2, "count_remaining", "countRemaining", K::Int64, Single),
        f!(3, "page_size", "pageSize", K::Int64, Single),
        f!(4, "total_count", "totalCount", K::Int64, Single),
        f!(5, "start_offset", "startOffset", K::Int64, Single),
    ],
};

pub static VALIDATE_ARGUMENT_TYPE_REQUEST: Message = Message {
    name: "ValidateArgumentTypeRequest",
    fields: &[
        f!(1, "value", "value", K::String, Single),
        f!(2, "type", "type", K::String, Single),
        f!(3, "binding_id", "bindingId", K::String, Single),
        f!(4, "argument_name", "argumentName", K::String, Single),
    ],
};

pub static VALIDATE_ARGUMENT_TYPE_RESPONSE: Message = Message {
    name: "ValidateArgumentTypeResponse",
    fields: &[
        f!(1, "valid", "valid", K::Bool, Single),
        f!(2, "description", "description", K::String, Single),
    ],
};

pub static WHO_AM_I_REQUEST: Message = Message {
    name: "WhoAmIRequest",
    fields: &[],
};

pub static WHO_AM_I_RESPONSE: Message = Message {
    name: "WhoAmIResponse",
    fields: &[
        f!(
            1,
            "authenticated_user",
            "authenticatedUser",
            K::String,
            Single
        ),
        f!(2, "usergroup", "usergroup", K::String, Single),
        f!(3, "provider", "provider", K::String, Single),
        f!(4, "acls", "acls", K::String, Repeated),
        f!(5, "sid", "sid", K::String, Single),
    ],
};

pub static SOS_REPORT_REQUEST: Message = Message {
    name: "SosReportRequest",
    fields: &[],
};

pub static SOS_REPORT_RESPONSE: Message = Message {
    name: "SosReportResponse",
    fields: &[f!(1, "alert", "alert", K::String, Single)],
};

pub static DUMP_VARS_REQUEST: Message = Message {
    name: "DumpVarsRequest",
    fields: &[],
};

pub static DUMP_VARS_RESPONSE: Message = Message {
    name: "DumpVarsResponse",
    fields: &[
        f!(1, "alert", "alert", K::String, Single),
        f!(
            2,
            "contents",
            "contents",
            K::Map(&DUMP_VARS_RESPONSE_CONTENTS_ENTRY),
            Repeated
        ),
    ],
};

pub static DUMP_PUBLIC_ID_ACTION_MAP_REQUEST: Message = Message {
    name: "DumpPublicIdActionMapRequest",
    fields: &[],
};

pub static DUMP_PUBLIC_ID_ACTION_MAP_RESPONSE: Message = Message {
    name: "DumpPublicIdActionMapResponse",
    fields: &[
        f!(1, "alert", "alert", K::String, Single),
        f!(
            2,
            "contents",
            "contents",
            K::Map(&DUMP_PUBLIC_ID_ACTION_MAP_RESPONSE_CONTENTS_ENTRY),
            Repeated
        ),
    ],
};

pub static GET_READYZ_REQUEST: Message = Message {
    name: "GetReadyzRequest",
    fields: &[],
};

pub static GET_READYZ_RESPONSE: Message = Message {
    name: "GetReadyzResponse",
    fields: &[f!(1, "status", "status", K::String, Single)],
};

pub static LOCAL_USER_LOGIN_REQUEST: Message = Message {
    name: "LocalUserLoginRequest",
    fields: &[
        f!(1, "username", "username", K::String, Single),
        f!(2, "password", "password", K::String, Single),
    ],
};

pub static LOCAL_USER_LOGIN_RESPONSE: Message = Message {
    name: "LocalUserLoginResponse",
    fields: &[f!(1, "success", "success", K::Bool, Single)],
};

pub static PASSWORD_HASH_REQUEST: Message = Message {
    name: "PasswordHashRequest",
    fields: &[f!(1, "password", "password", K::String, Single)],
};

pub static PASSWORD_HASH_RESPONSE: Message = Message {
    name: "PasswordHashResponse",
    fields: &[f!(1, "hash", "hash", K::String, Single)],
};

pub static LOGOUT_REQUEST: Message = Message {
    name: "LogoutRequest",
    fields: &[],
};

pub static LOGOUT_RESPONSE: Message = Message {
    name: "LogoutResponse",
    fields: &[],
};

pub static EVENT_STREAM_REQUEST: Message = Message {
    name: "EventStreamRequest",
    fields: &[],
};

pub static EVENT_STREAM_RESPONSE: Message = Message {
    name: "EventStreamResponse",
    fields: &[
        f!(
            1,
            "config_changed",
            "configChanged",
            K::Message(&EVENT_CONFIG_CHANGED),
            OneOf
        ),
        f!(
            2,
            "entity_changed",
            "entityChanged",
            K::Message(&EVENT_ENTITY_CHANGED),
            OneOf
        ),
        f!(
            3,
            "execution_started",
            "executionStarted",
            K::Message(&EVENT_EXECUTION_STARTED),
            OneOf
        ),
        f!(
            4,
            "execution_finished",
            "executionFinished",
            K::Message(&EVENT_EXECUTION_FINISHED),
            OneOf
        ),
        f!(
            5,
            "output_chunk",
            "outputChunk",
            K::Message(&EVENT_OUTPUT_CHUNK),
            OneOf
        ),
    ],
};

pub static EVENT_CONFIG_CHANGED: Message = Message {
    name: "EventConfigChanged",
    fields: &[],
};

pub static EVENT_ENTITY_CHANGED: Message = Message {
    name: "EventEntityChanged",
    fields: &[],
};

pub static EVENT_EXECUTION_STARTED: Message = Message {
    name: "EventExecutionStarted",
    fields: &[f!(
        1,
        "log_entry",
        "logEntry",
        K::Message(&LOG_ENTRY),
        Single
    )],
};

pub static EVENT_EXECUTION_FINISHED: Message = Message {
    name: "EventExecutionFinished",
    fields: &[f!(
        1,
        "log_entry",
        "logEntry",
        K::Message(&LOG_ENTRY),
        Single
    )],
};

pub static EVENT_OUTPUT_CHUNK: Message = Message {
    name: "EventOutputChunk",
    fields: &[
        f!(
            1,
            "execution_tracking_id",
            "executionTrackingId",
            K::String,
            Single
        ),
        f!(2, "output", "output", K::String, Single),
    ],
};

pub static GET_DIAGNOSTICS_REQUEST: Message = Message {
    name: "GetDiagnosticsRequest",
    fields: &[],
};

pub static GET_DIAGNOSTICS_RESPONSE: Message = Message {
    name: "GetDiagnosticsResponse",
    fields: &[
        f!(1, "ssh_found_key", "SshFoundKey", K::String, Single),
        f!(2, "ssh_found_config", "SshFoundConfig", K::String, Single),
    ],
};

pub static INIT_REQUEST: Message = Message {
    name: "InitRequest",
    fields: &[],
};

pub static INIT_RESPONSE: Message = Message {
    name: "InitResponse",
    fields: &[
        f!(1, "page_title", "pageTitle", K::String, Single),
        f!(2, "show_footer", "showFooter", K::Bool, Single),
        f!(3, "show_navigation", "showNavigation", K::Bool, Single),
        f!(4, "current_version", "currentVersion", K::String, Single),
        f!(5, "root_dashboards", "rootDashboards", K::String, Repeated),
        f!(6, "auth_local_login", "authLocalLogin", K::Bool, Single),
        f!(7, "login_required", "loginRequired", K::Bool, Single),
        f!(
            8,
            "authenticated_user",
            "authenticatedUser",
            K::String,
            Single
        ),
        f!(
            9,
            "authenticated_user_provider",
            "authenticatedUserProvider",
            K::String,
            Single
        ),
        f!(
            10,
            "effective_policy",
            "effectivePolicy",
            K::Message(&EFFECTIVE_POLICY),
            Single
        ),
        f!(
            11,
            "additional_links",
            "additionalLinks",
            K::Message(&ADDITIONAL_LINK),
            Repeated
        ),
        f!(12, "banner_message", "bannerMessage", K::String, Single),
        f!(13, "banner_css", "bannerCss", K::String, Single),
    ],
};

pub static GET_ACTION_BINDING_REQUEST: Message = Message {
    name: "GetActionBindingRequest",
    fields: &[f!(1, "binding_id", "bindingId", K::String, Single)],
};

pub static GET_ACTION_BINDING_RESPONSE: Message = Message {
    name: "GetActionBindingResponse",
    fields: &[f!(1, "action", "action", K::Message(&ACTION), Single)],
};

pub static GET_ENTITIES_REQUEST: Message = Message {
    name: "GetEntitiesRequest",
    fields: &[],
};

pub static GET_ENTITIES_RESPONSE: Message = Message {
    name: "GetEntitiesResponse",
    fields: &[f!(
        1,
        "entity_definitions",
        "entityDefinitions",
        K::Message(&ENTITY_DEFINITION),
        Repeated
    )],
};

pub static GET_ENTITY_REQUEST: Message = Message {
    name: "GetEntityRequest",
    fields: &[
        f!(1, "unique_key", "uniqueKey", K::String, Single),
        f!(2, "type", "type", K::String, Single),
    ],
};

pub static ACTION_ARGUMENT_SUGGESTIONS_ENTRY: Message = Message {
    name: "ActionArgument.SuggestionsEntry",
    fields: &[
        f!(1, "key", "key", K::String, Single),
        f!(2, "value", "value", K::String, Single),
    ],
};

pub static DUMP_VARS_RESPONSE_CONTENTS_ENTRY: Message = Message {
    name: "DumpVarsResponse.ContentsEntry",
    fields: &[
        f!(1, "key", "key", K::String, Single),
        f!(2, "value", "value", K::String, Single),
    ],
};

pub static DUMP_PUBLIC_ID_ACTION_MAP_RESPONSE_CONTENTS_ENTRY: Message = Message {
    name: "DumpPublicIdActionMapResponse.ContentsEntry",
    fields: &[
        f!(1, "key", "key", K::String, Single),
        f!(2, "value", "value", K::Message(&ACTION_ENTITY_PAIR), Single),
    ],
};

#[cfg(test)]
mod tests;
