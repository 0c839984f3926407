//! Why the engine refused a request: one variant per reason, with the text a client or the
//! log shows. The API maps each variant to a Connect code in one place
//! (`api::connect_error`); this module must not know Connect.

use std::fmt;

use crate::arguments::ArgError;
use crate::executor::TooLong;
use crate::permissions::Verb;

/// Why the engine refused. The API maps each variant to a Connect code in one place
/// (`api::connect_error`); the text is the message a client or the log shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    UnknownAction(String),
    UnknownExecution(String),
    NoExecutionOf(String),
    MissingIds,
    BadTrackingId(String),
    TrackingIdInUse(String),
    /// A request argument broke its declaration.
    BadArgument(ArgError),
    /// The command, with its arguments substituted, is longer than the system accepts: the
    /// argument to shorten (the longest value), if it has any.
    CommandTooLong {
        argument: Option<String>,
        why: TooLong,
    },
    /// RestartAction of an execution whose arguments are no longer known.
    ArgumentsUnavailable(String),
    /// RestartAction, by someone else, of an execution whose request gave password values.
    SecretsNotReplayed(String),
    /// The action is disabled by an error in the config: its id, and the errors.
    Disabled {
        id: String,
        reason: String,
    },
    Denied(Verb),
    LoginRequired,
    NegativeOffset(i64),
    Stopping,
    /// The history file cannot be written now (its writer retries): no run starts.
    HistoryUnwritable(String),
    /// This many records already wait for the disk under the history file.
    HistoryBehind {
        waiting: usize,
        file: String,
    },
    /// This many blocked runs' records already wait for the disk: their share of the queue
    /// is full, and a start that a limit blocks is refused.
    BlockedBehind {
        waiting: usize,
        file: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnknownAction(id) => write!(f, "no action with id {id:?}"),
            Error::UnknownExecution(id) => write!(f, "no execution with tracking id {id:?}"),
            Error::NoExecutionOf(id) => {
                write!(f, "action {id:?} has no execution in the history")
            }
            Error::MissingIds => f.write_str("give an executionTrackingId or an actionId"),
            Error::BadTrackingId(id) => write!(
                f,
                "uniqueTrackingId {id:?} is invalid: use 1 to 64 of A-Z a-z 0-9 . _ - or leave it empty"
            ),
            Error::TrackingIdInUse(id) => write!(
                f,
                "uniqueTrackingId {id:?} is already used: choose another or leave it empty"
            ),
            Error::BadArgument(e) => write!(f, "{e}"),
            Error::CommandTooLong {
                argument: Some(name),
                why,
            } => write!(f, "argument {name:?}: {why}"),
            Error::CommandTooLong {
                argument: None,
                why,
            } => write!(f, "{why}"),
            Error::ArgumentsUnavailable(id) => write!(
                f,
                "the arguments of execution {id:?} are no longer known: start the action again"
            ),
            Error::SecretsNotReplayed(id) => write!(
                f,
                "execution {id:?} was started with password values, which are replayed only \
                 for the caller who entered them: start the action again and enter them"
            ),
            Error::Disabled { id, reason } => write!(
                f,
                "action {id:?} is disabled by an error in the config, and does not run until \
                 it is fixed: {reason}"
            ),
            Error::Denied(verb) => write!(
                f,
                "you do not have the {} permission on this action",
                verb.as_str()
            ),
            Error::LoginRequired => f.write_str(crate::permissions::LOGIN_FIRST),
            Error::NegativeOffset(n) => write!(f, "startOffset must not be negative, got {n}"),
            Error::Stopping => f.write_str("actiond is shutting down: try again shortly"),
            Error::HistoryUnwritable(why) => write!(
                f,
                "{why}: no run starts until its record can be kept; actiond keeps retrying"
            ),
            Error::HistoryBehind { waiting, file } => write!(
                f,
                "{waiting} records already wait to be written to {file} (historyQueueLength): \
                 the storage is slower than the work; try again shortly"
            ),
            Error::BlockedBehind { waiting, file } => write!(
                f,
                "the action is busy (a limit blocks it), and {waiting} blocked presses already \
                 wait to be written to {file}, their share (a quarter of historyQueueLength, \
                 the rest is kept for runs): it is pressed faster than it may run; try again \
                 once it has finished"
            ),
        }
    }
}
