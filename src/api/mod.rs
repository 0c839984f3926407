//! The API: one function per operation, each short (decode → authorize → call the engine →
//! encode), and the one exhaustive mapping from domain errors to Connect codes. Only this
//! module and `protocol` know Connect and JSON; the server hands in decoded fields and a
//! caller, and gets bytes or a `ConnectError` back.

pub mod dto;
pub mod routes;

use std::sync::Arc;

pub use routes::{Op, Route, route};

use crate::arguments;
use crate::engine::{Engine, Error, StartRequest};
use crate::execution::{Execution, Snapshot};
use crate::permissions::{Caller, Decision, gate};
use crate::protocol::{Code, ConnectError, Fields};
use dto::{
    KillReply, LogEntry, LogEntryReply, LogsReply, ReadyzReply, TrackingIdReply, ValidateReply,
    to_json,
};

/// The one mapping from what the engine refused to what the client sees.
pub fn connect_error(e: Error) -> ConnectError {
    match e {
        Error::UnknownAction(id) => {
            ConnectError::new(Code::NotFound, format!("no action with id {id:?}"))
        }
        Error::UnknownExecution(id) => ConnectError::new(
            Code::NotFound,
            format!("no execution with tracking id {id:?}"),
        ),
        Error::NoExecutionOf(id) => ConnectError::new(
            Code::NotFound,
            format!("action {id:?} has no execution in the history"),
        ),
        Error::MissingIds => {
            ConnectError::new(Code::NotFound, "give an executionTrackingId or an actionId")
        }
        Error::BadTrackingId(id) => ConnectError::invalid(format!(
            "uniqueTrackingId {id:?} is invalid: use 1 to 64 of A-Z a-z 0-9 . _ - or leave it empty"
        )),
        Error::TrackingIdInUse(id) => ConnectError::new(
            Code::AlreadyExists,
            format!("uniqueTrackingId {id:?} is already used: choose another or leave it empty"),
        ),
        Error::NotBuilt(what) => ConnectError::new(
            Code::Unimplemented,
            format!("{what}: not supported by this version of actiond yet"),
        ),
        Error::BadArgument(e) => ConnectError::invalid(e.to_string()),
        Error::CommandTooLong(why) => ConnectError::invalid(why),
        Error::ArgumentsUnavailable(id) => ConnectError::new(
            Code::FailedPrecondition,
            format!(
                "the arguments of execution {id:?} are no longer known: start the action again"
            ),
        ),
        Error::Denied(verb) => ConnectError::new(
            Code::PermissionDenied,
            format!(
                "you do not have the {} permission on this action",
                verb.as_str()
            ),
        ),
        Error::LoginRequired => ConnectError::new(
            Code::Unauthenticated,
            "log in first: guests must log in here",
        ),
        Error::NegativeOffset(n) => {
            ConnectError::invalid(format!("startOffset must not be negative, got {n}"))
        }
        Error::Stopping => ConnectError::new(
            Code::Unavailable,
            "actiond is shutting down: try again shortly",
        ),
    }
}

impl From<Error> for ConnectError {
    fn from(e: Error) -> Self {
        connect_error(e)
    }
}

fn unimplemented(op: Op) -> ConnectError {
    ConnectError::new(
        Code::Unimplemented,
        format!(
            "{} is not implemented by this version of actiond yet",
            op.name()
        ),
    )
}

/// A POST operation.
pub async fn call(
    engine: &Arc<Engine>,
    op: Op,
    f: &Fields,
    caller: &Caller,
) -> Result<Vec<u8>, ConnectError> {
    if op.gated() && gate(&engine.config().auth, caller) == Decision::LoginRequired {
        return Err(connect_error(Error::LoginRequired));
    }
    match op {
        Op::StartAction => {
            let e = engine.start(start_request(f)?, caller)?;
            Ok(to_json(&TrackingIdReply {
                execution_tracking_id: &e.tracking_id,
            }))
        }
        Op::StartActionAndWait => {
            let e = engine.start(start_request(f)?, caller)?;
            Ok(wait_for_entry(&e).await)
        }
        Op::StartActionByGet | Op::StartActionByGetAndWait => {
            get_start(engine, op, &f.string("actionId")?, caller).await
        }
        Op::RestartAction => {
            let e = engine.restart(&f.string("executionTrackingId")?, caller)?;
            Ok(to_json(&TrackingIdReply {
                execution_tracking_id: &e.tracking_id,
            }))
        }
        Op::KillAction => {
            let id = f.string("executionTrackingId")?;
            let r = engine.kill(&id, caller)?;
            Ok(to_json(&KillReply {
                execution_tracking_id: &id,
                killed: r.killed,
                already_completed: r.already_completed,
                found: true,
            }))
        }
        Op::ExecutionStatus => {
            let e = engine.status(
                &f.string("executionTrackingId")?,
                &f.string("actionId")?,
                caller,
            )?;
            Ok(entry_reply(&e.snapshot()))
        }
        Op::GetLogs => logs(engine, None, f.int64("startOffset")?, caller),
        Op::GetActionLogs => logs(
            engine,
            Some(&f.string("actionId")?),
            f.int64("startOffset")?,
            caller,
        ),
        Op::ValidateArgumentType => {
            let (valid, description) =
                arguments::validate_type(&f.string("type")?, &f.string("value")?);
            Ok(to_json(&ValidateReply {
                valid,
                description: &description,
            }))
        }
        Op::GetReadyz => Ok(to_json(&ReadyzReply {
            status: if engine.ready() { "OK" } else { "STOPPING" },
        })),
        Op::GetDashboard
        | Op::GetActionBinding
        | Op::GetEntities
        | Op::GetEntity
        | Op::LocalUserLogin
        | Op::Logout
        | Op::WhoAmI
        | Op::PasswordHash
        | Op::Init
        | Op::GetDiagnostics
        | Op::SosReport
        | Op::DumpVars
        | Op::DumpPublicIdActionMap
        | Op::EventStream => Err(unimplemented(op)),
    }
}

/// `GET /api/StartActionByGet[AndWait]/<id>` and the POST forms of those two operations:
/// a start without arguments.
pub async fn get_start(
    engine: &Arc<Engine>,
    op: Op,
    id: &str,
    caller: &Caller,
) -> Result<Vec<u8>, ConnectError> {
    if gate(&engine.config().auth, caller) == Decision::LoginRequired {
        return Err(connect_error(Error::LoginRequired));
    }
    let e = engine.start(
        StartRequest {
            binding_id: id.to_string(),
            ..StartRequest::default()
        },
        caller,
    )?;
    if op == Op::StartActionByGetAndWait {
        Ok(wait_for_entry(&e).await)
    } else {
        Ok(to_json(&TrackingIdReply {
            execution_tracking_id: &e.tracking_id,
        }))
    }
}

fn start_request(f: &Fields) -> Result<StartRequest, ConnectError> {
    let mut arguments = Vec::new();
    for (i, a) in f.messages("arguments")?.iter().enumerate() {
        let name = a
            .string("name")
            .map_err(|e| ConnectError::invalid(format!("arguments[{i}].{}", e.message)))?;
        let value = a
            .string("value")
            .map_err(|e| ConnectError::invalid(format!("arguments[{i}].{}", e.message)))?;
        arguments.push((name, value));
    }
    Ok(StartRequest {
        binding_id: f.string("actionId")?,
        arguments,
        tracking_id: f.string("uniqueTrackingId")?,
    })
}

async fn wait_for_entry(e: &Execution) -> Vec<u8> {
    e.wait().await;
    entry_reply(&e.snapshot())
}

fn entry_reply(s: &Snapshot) -> Vec<u8> {
    to_json(&LogEntryReply {
        log_entry: LogEntry::from(s),
    })
}

fn logs(
    engine: &Engine,
    binding: Option<&str>,
    offset: i64,
    caller: &Caller,
) -> Result<Vec<u8>, ConnectError> {
    let page = engine.logs(binding, offset, caller)?;
    let snapshots: Vec<Snapshot> = page.entries.iter().map(|e| e.snapshot()).collect();
    let size = engine.config().limits.log_history_page_size;
    Ok(to_json(&LogsReply::new(&page, &snapshots, size, offset)))
}
