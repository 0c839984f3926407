//! Actions: what each runs, its limits, who may see it, what starts it by itself, and how
//! one is read from its YAML mapping (a top-level `actions:` entry or a dashboard's
//! `inlineAction`). Every problem found in an action concerns that action alone, and reading
//! one gives the action together with its own problems (`CheckedAction`), so `collect` alone
//! decides what an action's problems mean for the whole file: an error in an action disables
//! that action (it stays in the config, named with its errors, and never runs) and leaves
//! the rest of the file in force. Only a configured id used twice is found later, once every
//! id is known (`settle_ids`), and disables the later action the same way. The command is
//! `command`'s, the argument declarations `arguments`', the ids `ids`'.

use std::path::PathBuf;
use std::time::Duration;

use super::Problem;
use super::checker::{Checker, Field, Fields, Problems, path_or};
use super::command::{self, CommandSpec, CommandTemplate};
use super::icons::{expand_icon, warn_online_icon, warn_unsafe_html_placeholder};
use super::ids::{self, Claim};
use super::schema::{ACTION, RATE};
use super::tree::Node;
use crate::arguments::{self, Argument, Dash};

/// The shortest timeout, in seconds: OliveTin raises anything below it (0 included) to it,
/// and actiond does the same, with a warning.
pub const MIN_TIMEOUT_SECS: i64 = 3;
/// The longest timeout, in seconds: a day.
pub const MAX_TIMEOUT_SECS: i64 = 86_400;

/// One configured action: what it runs and everything that governs a run of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    /// The configured or derived id (`[A-Za-z0-9_-]{1,64}`), unique across actions.
    pub id: String,
    pub title: String,
    pub icon: String,
    /// The command as written.
    pub command: CommandSpec,
    /// The command compiled for substitution.
    pub template: CommandTemplate,
    pub timeout: Duration,
    pub arguments: Vec<Argument>,
    /// `entity:` type name; such an action yields one binding per entity instance.
    pub entity: Option<String>,
    pub hidden: bool,
    /// `maxConcurrent` (default 1): a press while this many run is recorded as blocked.
    pub max_concurrent: usize,
    pub max_rate: Vec<RateRule>,
    pub acls: Vec<String>,
    /// `popupOnStart` (or its old name `onclick`); default `defaultPopupOnStart`.
    pub popup_on_start: Popup,
    /// `workingDirectory`, resolved against the config's directory; `None` = `base_dir`.
    pub working_directory: Option<PathBuf>,
    pub exec_on_startup: bool,
    pub exec_on_cron: Vec<String>,
    pub exec_on_file_created_in_dir: Vec<String>,
    pub exec_on_file_changed_in_dir: Vec<String>,
    /// Whether a plain `GET /api/StartActionByGet/<id>` may start it, and with what.
    pub plain_get: PlainGet,
    /// `deviceClass`: what Home Assistant shows its button as (`restart`, `identify`,
    /// `update`); `None` for a plain button.
    pub device_class: Option<ButtonClass>,
    /// Set when the config holds an error in this action: it is still listed (in the log,
    /// greyed on the page, by `--check-config`) but never runs, by any route.
    pub disabled: Option<Disabled>,
    /// `allowLeadingDash` on an entity action: whether a field of its entity that starts
    /// with `-` may start an argument of its command (otherwise that instance is disabled).
    pub entity_dash: Dash,
}

/// How an action may be started by a plain GET (`/api/StartActionByGet/<id>` and
/// `…AndWait/<id>`). Any web page can make a browser send a GET, with the board's cookies,
/// and over plain HTTP to a LAN name the browser marks it with no `Sec-Fetch-*`, `Origin` or
/// `Referer`; so a GET alone proves nothing about who wanted it. It starts an action only with
/// an API token in `Authorization` (which no page can add without the browser asking the
/// board first), or with what this says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum PlainGet {
    /// Only with an API token (the default).
    #[default]
    TokenOnly,
    /// Also with `?key=<key>`, the key whose SHA-256 is `linkKeySha256` (a link for a QR
    /// code, a bookmark or a Stream Deck button).
    Key { sha256: String },
    /// `insecureAllowStartFromAnyWebPage: true`: any GET, whatever page caused it.
    AnyPage,
}

/// Why an action is disabled: every error found in it, each at its YAML path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disabled {
    pub errors: Vec<Problem>,
    /// Whether the page may show it (greyed, with its errors) to callers who may view it.
    /// Not when its `acls:` name a list that does not exist: who was meant to see it is then
    /// unknown, so nobody sees it.
    pub shown: bool,
}

impl Disabled {
    /// The errors in one line, for the log, the page and a refused start.
    pub fn reason(&self) -> String {
        self.errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl Action {
    /// Stands in for an action no longer in the config, behind the history records of it
    /// that were restored after a restart: it can be read, never run.
    pub fn removed(id: &str, title: &str) -> Action {
        Action {
            id: id.to_string(),
            title: title.to_string(),
            icon: String::new(),
            command: CommandSpec::Exec(Vec::new()),
            template: CommandTemplate::Exec(Vec::new()),
            timeout: Duration::from_secs(1),
            arguments: Vec::new(),
            entity: None,
            hidden: true,
            max_concurrent: 1,
            max_rate: Vec::new(),
            acls: Vec::new(),
            popup_on_start: Popup::Nothing,
            working_directory: None,
            exec_on_startup: false,
            exec_on_cron: Vec::new(),
            exec_on_file_created_in_dir: Vec::new(),
            exec_on_file_changed_in_dir: Vec::new(),
            plain_get: PlainGet::TokenOnly,
            device_class: None,
            disabled: None,
            entity_dash: Dash::Refuse,
        }
    }
}

/// Home Assistant's device classes for a button (its documented list): they choose the
/// button's icon and tell Home Assistant's users what pressing it does to the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ButtonClass {
    /// The button restarts the device (a reboot).
    Restart,
    /// The button makes the device show itself (a blinking LED, a beep).
    Identify,
    /// The button updates the device's software.
    Update,
}

impl ButtonClass {
    pub const ALL: [ButtonClass; 3] = [
        ButtonClass::Restart,
        ButtonClass::Identify,
        ButtonClass::Update,
    ];

    /// Home Assistant's name of the class.
    pub fn as_str(self) -> &'static str {
        match self {
            ButtonClass::Restart => "restart",
            ButtonClass::Identify => "identify",
            ButtonClass::Update => "update",
        }
    }
}

/// `deviceClass`. A class Home Assistant does not know is left out with a warning: Home
/// Assistant would refuse the button's whole discovery message for it, and the action
/// itself is fine.
fn device_class(c: &mut Checker<'_>, field: Field<'_, '_>) -> Option<ButtonClass> {
    let at = field.map(|(_, p)| p.to_string())?;
    let text = c.text(field)?;
    let class = ButtonClass::ALL
        .into_iter()
        .find(|k| k.as_str() == text.trim());
    if class.is_none() {
        c.warn(
            &at,
            format!(
                "{text:?} is not one of Home Assistant's button classes (restart, identify, \
                 update): the button is announced without a class"
            ),
        );
    }
    class
}

/// What the web page shows when an action starts (`popupOnStart`): OliveTin's values plus
/// its default, `nothing`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Popup {
    Nothing,
    ExecutionDialog,
    ExecutionDialogOutputHtml,
    ExecutionDialogStdoutOnly,
    ExecutionButton,
    History,
}

impl Popup {
    /// Every value, in the order a warning lists them.
    pub const ALL: [Popup; 6] = [
        Popup::Nothing,
        Popup::ExecutionDialog,
        Popup::ExecutionDialogOutputHtml,
        Popup::ExecutionDialogStdoutOnly,
        Popup::ExecutionButton,
        Popup::History,
    ];

    /// The value as a config writes it and the page receives it.
    pub fn as_str(self) -> &'static str {
        match self {
            Popup::Nothing => "nothing",
            Popup::ExecutionDialog => "execution-dialog",
            Popup::ExecutionDialogOutputHtml => "execution-dialog-output-html",
            Popup::ExecutionDialogStdoutOnly => "execution-dialog-stdout-only",
            Popup::ExecutionButton => "execution-button",
            Popup::History => "history",
        }
    }

    /// The value written exactly so (lower case, as OliveTin compares it), if it is one.
    pub fn parse(text: &str) -> Option<Popup> {
        Popup::ALL.into_iter().find(|p| p.as_str() == text)
    }
}

/// `maxRate` entry: at most `limit` runs started within `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateRule {
    pub limit: u32,
    pub window: Duration,
}

/// An action as read, before its id is settled (derived ids need every configured id first).
pub(super) struct Draft {
    pub action: Action,
    /// The id as configured; `None` when it is to be derived from the title.
    pub configured_id: Option<String>,
    /// Path of the action's mapping, for id problems.
    pub path: String,
    /// The errors found in the action so far: any disables it.
    pub errors: Vec<Problem>,
    /// Whether its `acls:` name a list that does not exist (see `Disabled::shown`).
    pub unknown_acl: bool,
}

/// What reading one action gave: the action (with stand-ins where a part could not be read,
/// so that a broken action can still be named) and every problem found in it.
pub(super) struct CheckedAction {
    pub draft: Draft,
    pub problems: Problems,
}

/// What every action takes from the rest of the config while it is read.
pub(super) struct ActionContext<'c> {
    /// `defaultTimeout`, `defaultIconForActions` and `defaultPopupOnStart`.
    pub timeout: Duration,
    pub icon: String,
    pub popup: Popup,
    /// The access control lists an action's `acls:` may name.
    pub acl_names: Vec<&'c str>,
}

/// What a dashboard component hands down to the inline action it holds: its title and its
/// entity (its own, or its fieldset's).
#[derive(Clone, Copy, Default)]
pub(super) struct Inherited<'a> {
    pub title: Option<&'a str>,
    pub entity: Option<&'a str>,
}

/// Reads one action.
pub(super) fn read(
    c: &mut Checker<'_>,
    entries: &[(String, Node)],
    path: &str,
    ctx: &ActionContext<'_>,
    inherited: Inherited<'_>,
) -> CheckedAction {
    let (draft, problems) = c.scoped(|c| {
        // `${{ VAR }}` problems inside this action were found before any action was read;
        // they are this action's, like any other problem in it.
        c.claim_pending(path);
        draft(c, entries, path, ctx, inherited)
    });
    CheckedAction { draft, problems }
}

/// Reads one action and adds it to the config. This is where an action's problems get their
/// meaning: its warnings join the file's, and its errors disable the action alone (they are
/// listed with the file's, counted as confined to one action, so they do not refuse the
/// file). The action joins `drafts` either way, so the log, the page and `--check-config`
/// can name it. Returns its title.
pub(super) fn collect(
    c: &mut Checker<'_>,
    entries: &[(String, Node)],
    path: &str,
    ctx: &ActionContext<'_>,
    inherited: Inherited<'_>,
    drafts: &mut Vec<Draft>,
) -> String {
    let CheckedAction {
        mut draft,
        problems,
    } = read(c, entries, path, ctx, inherited);
    c.problems.warnings.extend(problems.warnings);
    c.problems.confine(problems.errors.clone());
    draft.errors = problems.errors;
    let title = draft.action.title.clone();
    drafts.push(draft);
    title
}

fn draft(
    c: &mut Checker<'_>,
    entries: &[(String, Node)],
    path: &str,
    ctx: &ActionContext<'_>,
    inherited: Inherited<'_>,
) -> Draft {
    let f = c.fields(entries, path, ACTION);
    let configured_id = configured_id(c, &f, path);
    let title = title(c, &f, path, inherited.title, configured_id.as_deref());
    // An action with nothing to run is disabled; the empty argv stands in for its command.
    let command = command::read(c, &f, path).unwrap_or(CommandSpec::Exec(Vec::new()));
    let timeout = timeout(c, f.get("timeout"), ctx.timeout);
    let max_concurrent = max_concurrent(c, f.get("maxConcurrent"));
    let max_rate = rate_rules(c, f.get("maxRate"));
    let (acls, unknown_acl) = acl_names(c, f.get("acls"), ctx);
    let icon = match c.text(f.get("icon")) {
        Some(icon) if !icon.is_empty() => {
            warn_online_icon(c, path_or(f.get("icon"), path), &icon);
            warn_unsafe_html_placeholder(c, path_or(f.get("icon"), path), &icon);
            expand_icon(&icon)
        }
        _ => ctx.icon.clone(),
    };
    let popup_on_start = popup(c, f.get("popupOnStart"), ctx.popup);
    let working_directory = working_directory(c, f.get("workingDirectory"), path);
    let entity = c
        .text(f.get("entity"))
        .filter(|e| !e.is_empty())
        .or_else(|| inherited.entity.map(str::to_string));
    let mut arguments = super::arguments::read(c, f.get("arguments"));
    let exec_on_cron = cron_lines(c, f.get("execOnCron"));
    let exec_on_file_created_in_dir = c.text_list(f.get("execOnFileCreatedInDir"));
    let exec_on_file_changed_in_dir = c.text_list(f.get("execOnFileChangedInDir"));
    if !exec_on_file_created_in_dir.is_empty() || !exec_on_file_changed_in_dir.is_empty() {
        // The file's path, name, directory, extension and size reach the command as
        // arguments, through the same checks and quoting as any other.
        arguments::declare_file_arguments(&mut arguments);
    }
    let template = command::compile(
        c,
        &command,
        &f,
        path,
        &arguments,
        entity.as_deref(),
        working_directory.as_deref(),
    );
    let exec_on_startup = c.flag(f.get("execOnStartup"), false);
    let plain_get = plain_get(c, &f, path);
    if exec_on_startup || !exec_on_cron.is_empty() {
        warn_required_without_default(c, path, &arguments);
    }
    let action = Action {
        // Settled by `settle_ids` once every configured id is known.
        id: String::new(),
        title,
        icon,
        command,
        template,
        timeout,
        arguments,
        entity,
        hidden: c.flag(f.get("hidden"), false),
        max_concurrent,
        max_rate,
        acls,
        popup_on_start,
        working_directory,
        exec_on_startup,
        exec_on_cron,
        exec_on_file_created_in_dir,
        exec_on_file_changed_in_dir,
        plain_get,
        device_class: device_class(c, f.get("deviceClass")),
        disabled: None,
        entity_dash: if c.flag(f.get("allowLeadingDash"), false) {
            Dash::Allow
        } else {
            Dash::Refuse
        },
    };
    Draft {
        action,
        configured_id,
        path: path.to_string(),
        errors: Vec::new(),
        unknown_acl,
    }
}

/// `linkKeySha256` and `insecureAllowStartFromAnyWebPage`. Both at once is an error: the
/// second makes the first pointless, and the author meant one of them.
fn plain_get(c: &mut Checker<'_>, f: &Fields<'_>, path: &str) -> PlainGet {
    let any_page = c.flag(f.get("insecureAllowStartFromAnyWebPage"), false);
    let Some(written) = c.text(f.get("linkKeySha256")) else {
        return if any_page {
            PlainGet::AnyPage
        } else {
            PlainGet::TokenOnly
        };
    };
    let key_path = path_or(f.get("linkKeySha256"), path);
    let sha256 = written.trim().to_ascii_lowercase();
    if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
        c.error(
            key_path,
            "linkKeySha256 must be the 64 hex digits of the link key's SHA-256 (`actiond \
             gen-token` prints a key and its hash)",
        );
        return PlainGet::TokenOnly;
    }
    if any_page {
        c.error(
            key_path,
            "linkKeySha256 and insecureAllowStartFromAnyWebPage: true together: the key would \
             protect nothing; keep the key and remove the other",
        );
        return PlainGet::TokenOnly;
    }
    PlainGet::Key { sha256 }
}

/// The `id` when it is valid; an invalid one is an error (and the id is then derived).
fn configured_id(c: &mut Checker<'_>, f: &Fields<'_>, path: &str) -> Option<String> {
    let id = c.text(f.get("id"))?;
    if ids::is_valid(&id) {
        return Some(id);
    }
    c.error(
        path_or(f.get("id"), path),
        format!("invalid id {id:?}: use 1 to 64 letters, digits, `_` or `-` (ids appear in URLs)"),
    );
    None
}

/// The title: written, else inherited from the dashboard component, else the configured id.
/// When there is none, an error (unless an invalid id was written, which has its own), and
/// the action's path stands in, so the disabled action can still be named.
fn title(
    c: &mut Checker<'_>,
    f: &Fields<'_>,
    path: &str,
    inherited: Option<&str>,
    configured_id: Option<&str>,
) -> String {
    let title = c
        .text(f.get("title"))
        .filter(|t| !t.trim().is_empty())
        .or_else(|| inherited.map(str::to_string))
        .filter(|t| !t.trim().is_empty());
    match (title, configured_id) {
        (Some(title), _) => title,
        (None, Some(id)) => id.to_string(),
        (None, None) => {
            if !f.written("id") {
                c.error(path, "an action needs a title");
            }
            path.to_string()
        }
    }
}

/// `timeout` in whole seconds, at most a day; `defaultTimeout` when absent or wrong. Below
/// 3 (0 included) it becomes 3 with a warning, as OliveTin makes it.
fn timeout(c: &mut Checker<'_>, field: Field<'_, '_>, default: Duration) -> Duration {
    let Some((_, at)) = field else {
        return default;
    };
    match c.integer(field) {
        Some(secs) if secs < MIN_TIMEOUT_SECS => {
            c.warn(
                at,
                format!(
                    "timeout {secs} is below {MIN_TIMEOUT_SECS} seconds, so it is \
                     {MIN_TIMEOUT_SECS} (as in OliveTin)"
                ),
            );
            Duration::from_secs(MIN_TIMEOUT_SECS.unsigned_abs())
        }
        Some(secs @ ..=MAX_TIMEOUT_SECS) => Duration::from_secs(secs.unsigned_abs()),
        Some(secs) => {
            c.error(
                at,
                format!("timeout must be at most {MAX_TIMEOUT_SECS} seconds (a day), found {secs}"),
            );
            default
        }
        None => default,
    }
}

/// `maxConcurrent`; 1 when absent or not a number. Below 1 it becomes 1 with a warning, as
/// OliveTin makes it: one run at a time is the default anyway, so nothing is opened by it.
fn max_concurrent(c: &mut Checker<'_>, field: Field<'_, '_>) -> usize {
    let Some((_, at)) = field else {
        return 1;
    };
    match c.integer(field) {
        Some(n) if n >= 1 => usize::try_from(n).unwrap_or(usize::MAX),
        Some(n) => {
            c.warn(
                at,
                format!("maxConcurrent {n} is below 1, so it is 1 (as in OliveTin)"),
            );
            1
        }
        None => 1,
    }
}

/// `acls`: each must name one of `accessControlLists`; also whether one does not. A list
/// named wrongly would leave out whatever it was meant to grant or keep back, so the action
/// is disabled and hidden rather than guessed at.
fn acl_names(
    c: &mut Checker<'_>,
    field: Field<'_, '_>,
    ctx: &ActionContext<'_>,
) -> (Vec<String>, bool) {
    let acls = c.text_list(field);
    let mut unknown = false;
    c.each_entry(field, &acls, |_, name| {
        let missing = !ctx.acl_names.contains(&name);
        unknown |= missing;
        missing.then(|| {
            format!(
                "no access control list is named {name:?} (see accessControlLists): the action \
                 is disabled and shown to nobody, since who may see and run it is unknown"
            )
        })
    });
    (acls, unknown)
}

/// `execOnCron`: each line must parse (see `schedule`); a bad one is an error at its own
/// path.
fn cron_lines(c: &mut Checker<'_>, field: Field<'_, '_>) -> Vec<String> {
    let lines = c.text_list(field);
    c.each_entry(field, &lines, |_, line| {
        crate::schedule::parse(line, crate::duration::parse)
            .err()
            .map(|why| format!("invalid cron line {line:?}: {why}"))
    });
    lines
}

fn rate_rules(c: &mut Checker<'_>, field: Field<'_, '_>) -> Vec<RateRule> {
    let mut rules = Vec::new();
    for (entries, path) in c.mappings(field) {
        let f = c.fields(entries, &path, RATE);
        let limit = rate_limit(c, f.get("limit"), &path);
        let window = rate_window(c, f.get("duration"), &path);
        if let (Some(limit), Some(window)) = (limit, window) {
            rules.push(RateRule { limit, window });
        }
    }
    rules
}

fn rate_limit(c: &mut Checker<'_>, field: Field<'_, '_>, path: &str) -> Option<u32> {
    let Some((_, at)) = field else {
        c.error(path, "a maxRate rule needs a limit (runs per duration)");
        return None;
    };
    match c.integer(field) {
        Some(n @ 1..=0xFFFF_FFFF) => u32::try_from(n).ok(),
        Some(n) => {
            c.error(at, format!("limit must be at least 1, found {n}"));
            None
        }
        None => None,
    }
}

fn rate_window(c: &mut Checker<'_>, field: Field<'_, '_>, path: &str) -> Option<Duration> {
    let Some(text) = c.text(field) else {
        if field.is_none() {
            c.error(
                path,
                "a maxRate rule needs a duration such as 30s, 5m or 1h30m",
            );
        }
        return None;
    };
    let at = path_or(field, path);
    match crate::duration::parse(&text) {
        Ok(d) if !d.is_zero() => Some(d),
        Ok(_) => {
            c.error(at, "duration must be longer than zero");
            None
        }
        Err(why) => {
            c.error(
                at,
                format!("invalid duration {text:?}: {why} (write it like 30s, 5m or 1h30m)"),
            );
            None
        }
    }
}

/// Runs that a trigger starts have no one to ask for a value, so a required argument without
/// a default would refuse every one of them.
fn warn_required_without_default(c: &mut Checker<'_>, path: &str, arguments: &[Argument]) {
    for a in arguments
        .iter()
        .filter(|a| a.reject_null && a.default.is_none())
    {
        c.warn(
            path,
            format!(
                "argument {:?} is required and has no default, so the runs that execOnStartup \
                 or execOnCron start will be refused: give it a default",
                a.name
            ),
        );
    }
}

/// A `popupOnStart` value; an unknown one falls back to `default` with a warning, as
/// OliveTin falls back to its default for values its UI does not know.
pub(super) fn popup(c: &mut Checker<'_>, field: Field<'_, '_>, default: Popup) -> Popup {
    let Some(value) = c.text(field) else {
        return default;
    };
    if value.is_empty() {
        return default;
    }
    if let Some(popup) = Popup::parse(&value) {
        return popup;
    }
    c.warn(
        path_or(field, ""),
        format!(
            "unknown value {value:?}, using {:?} (known: {})",
            default.as_str(),
            Popup::ALL.map(Popup::as_str).join(", ")
        ),
    );
    default
}

/// Warns about actions and entity-fed arguments whose entity type no `entities:` entry
/// declares: they have no instances, so such an action has no button and such an argument
/// no choice (OliveTin shows nothing either), which is rarely what was meant.
pub(super) fn warn_unknown_entity_types(c: &mut Checker<'_>, drafts: &[Draft], known: &[&str]) {
    for d in drafts {
        let a = &d.action;
        if let Some(t) = a.entity.as_deref().filter(|t| !known.contains(t)) {
            c.warn(
                &d.path,
                format!(
                    "no entities: entry declares the entity type {t:?}, so this action has no \
                     button until one does"
                ),
            );
        }
        for arg in &a.arguments {
            if let Some(t) = arg.entity.as_deref().filter(|t| !known.contains(t)) {
                c.warn(
                    &d.path,
                    format!(
                        "no entities: entry declares the entity type {t:?}, so argument {:?} \
                         has no choices until one does",
                        arg.name
                    ),
                );
            }
        }
    }
}

/// Gives every action its id (see `ids`) and turns the errors of each into its `disabled`.
/// A configured id used twice disables the later action, which gets an id of its own, so
/// that it can still be named.
pub(super) fn settle_ids(c: &mut Checker<'_>, mut drafts: Vec<Draft>) -> Vec<Action> {
    let claims: Vec<Claim<'_>> = drafts
        .iter()
        .map(|d| Claim {
            configured: d.configured_id.as_deref(),
            title: &d.action.title,
            path: &d.path,
        })
        .collect();
    let (settled, duplicates) = ids::settle(&claims);
    for (index, problem) in duplicates {
        c.problems.confine(vec![problem.clone()]);
        drafts[index].errors.push(problem);
    }
    drafts
        .into_iter()
        .zip(settled)
        .map(|(draft, id)| Action {
            id,
            disabled: (!draft.errors.is_empty()).then_some(Disabled {
                errors: draft.errors,
                shown: !draft.unknown_acl,
            }),
            ..draft.action
        })
        .collect()
}

#[cfg(test)]
mod tests;

/// `workingDirectory`, resolved against the config's directory. A placeholder in it is an
/// error (it is never filled in: the directory would be its braces, taken literally); a
/// directory that is not there now is a warning, since it may be mounted later (a run that
/// cannot enter it fails naming it).
fn working_directory(c: &mut Checker<'_>, field: Field<'_, '_>, path: &str) -> Option<PathBuf> {
    let written = c.text(field).filter(|d| !d.trim().is_empty())?;
    let at = path_or(field, path);
    if written.contains("{{") {
        c.error(
            at,
            format!(
                "workingDirectory {written:?} holds a placeholder, which is not filled in there \
                 (only the command's are); name the directory, or `cd` to it in the command"
            ),
        );
        return None;
    }
    let dir = c.resolve(written.trim());
    if !dir.is_dir() {
        c.warn(
            at,
            format!(
                "workingDirectory {} is not a directory now; each run fails until it is",
                dir.display()
            ),
        );
    }
    Some(dir)
}
