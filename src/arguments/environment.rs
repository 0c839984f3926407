//! How an argument's value reaches its command besides `{{ name }}`. The only environment
//! variable it sets is `ACTIOND_ARG_<NAME>` (its name upper-cased): actiond's own namespace,
//! which no program reads as its settings. That is the rule, by shape, not by a list of names,
//! because a list is always one name short: `TAR_OPTIONS` makes `tar` run a program,
//! `RSYNC_RSH` makes `rsync` run one, `GREP` makes `zgrep` evaluate its value, `ZIP` gives `zip`
//! options that run commands, `DBUS_SYSTEM_BUS_ADDRESS`, `http_proxy` and `VIMINIT` steer
//! others, and every program the command starts inherits the environment.
//!
//! OliveTin sets the bare `<NAME>` instead, and a `shell:` command written for it reads
//! `$NAME`. For such a command actiond defines `NAME` as a shell variable of the command's own
//! shell, never exported (the command's text starts with `unset NAME; NAME=$ACTIOND_ARG_NAME;`):
//! the command reads it, the programs it starts do not. The shell's own variables (`IFS`,
//! `PATH`, `PS4`, `ENV`, …) are never defined that way: they change how the shell itself reads
//! the rest of the command. Pure; no I/O.

/// The prefix of the only variables a value sets.
pub const PREFIX: &str = "ACTIOND_ARG_";

/// The variables dash, bash (plain and `--posix`) and busybox ash read themselves, or keep
/// read-only, as their manuals list them: defining one of them changes how the shell reads
/// the command, finds programs, expands `~`, prompts or traces, or fails.
const SHELL_VARIABLES: &[&str] = &[
    "CDPATH",
    "COLUMNS",
    "COPROC",
    "DIRSTACK",
    "EMACS",
    "ENV",
    "EPOCHREALTIME",
    "EPOCHSECONDS",
    "EUID",
    "EXECIGNORE",
    "FCEDIT",
    "FIGNORE",
    "FUNCNAME",
    "FUNCNEST",
    "GLOBIGNORE",
    "GLOBSORT",
    "GROUPS",
    "HISTCMD",
    "HISTCONTROL",
    "HISTFILE",
    "HISTFILESIZE",
    "HISTIGNORE",
    "HISTSIZE",
    "HISTTIMEFORMAT",
    "HOME",
    "HOSTFILE",
    "HOSTNAME",
    "HOSTTYPE",
    "IFS",
    "IGNOREEOF",
    "INPUTRC",
    "INSIDE_EMACS",
    "LANG",
    "LANGUAGE",
    "LINENO",
    "LINES",
    "MACHTYPE",
    "MAIL",
    "MAILCHECK",
    "MAILPATH",
    "MAPFILE",
    "NLSPATH",
    "OLDPWD",
    "OPTARG",
    "OPTERR",
    "OPTIND",
    "OSTYPE",
    "PATH",
    "PIPESTATUS",
    "POSIXLY_CORRECT",
    "PPID",
    "PROMPT_COMMAND",
    "PROMPT_DIRTRIM",
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "PWD",
    "RANDOM",
    "REPLY",
    "SECONDS",
    "SHELL",
    "SHELLOPTS",
    "SHLVL",
    "SRANDOM",
    "TIMEFORMAT",
    "TMOUT",
    "TMPDIR",
    "UID",
];

/// Prefixes of the shell's own variables (`BASH_ENV`, `BASH_FUNC_…`, `LC_ALL`, completion
/// and readline state), and of actiond's own (`ACTIOND_USER`, which a command must be able to
/// trust).
const SHELL_PREFIXES: &[&str] = &["BASH", "LC_", "COMP_", "READLINE_", "ACTIOND"];

/// Why an argument's bare name cannot be a shell variable of its command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotShellVariable {
    /// It has characters no variable name has (only letters, digits and `_`, not first a
    /// digit): the value reaches the command through `{{ name }}` only.
    NoVariable,
    /// It is one of the shell's own variables, or actiond's.
    Reserved,
}

impl NotShellVariable {
    /// The reason, after "… because …".
    pub fn why(self) -> &'static str {
        match self {
            NotShellVariable::NoVariable => "its name has characters a variable name cannot have",
            NotShellVariable::Reserved => {
                "the shell reads that variable itself (as it reads IFS, PATH or PS4), or \
                 actiond sets it"
            }
        }
    }
}

/// Whether an argument named `name` may be read as `$NAME` in its `shell:` command, as a shell
/// variable that is never exported.
pub fn shell_variable(name: &str) -> Result<String, NotShellVariable> {
    let valid = name.as_bytes().first().is_some_and(|b| !b.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !valid {
        return Err(NotShellVariable::NoVariable);
    }
    let upper = name.to_ascii_uppercase();
    let reserved = SHELL_VARIABLES.contains(&upper.as_str())
        || SHELL_PREFIXES.iter().any(|p| upper.starts_with(p));
    if reserved {
        Err(NotShellVariable::Reserved)
    } else {
        Ok(upper)
    }
}

/// `ACTIOND_ARG_<NAME>`, or `None` when the name has characters no variable name has.
pub fn prefixed(name: &str) -> Option<String> {
    let valid = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    valid.then(|| format!("{PREFIX}{}", name.to_ascii_uppercase()))
}

/// What a `shell:` command's text starts with so that it reads each of `names` (upper-cased,
/// each passed by [`shell_variable`]) as the value of its argument: the variable unset first,
/// so one inherited from the service's environment is not exported, then assigned from
/// `ACTIOND_ARG_<NAME>` (an assignment neither splits nor globs its value). Empty for none.
pub fn shell_prelude(names: &[String]) -> String {
    if names.is_empty() {
        return String::new();
    }
    let mut out = format!("unset {}; ", names.join(" "));
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&format!("{name}=${PREFIX}{name}"));
    }
    out.push_str("; ");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_argument_with_a_variable_name_is_set_prefixed_only() {
        assert_eq!(prefixed("tar_options").unwrap(), "ACTIOND_ARG_TAR_OPTIONS");
        assert_eq!(prefixed("Host").unwrap(), "ACTIOND_ARG_HOST");
        assert_eq!(prefixed("9lives").unwrap(), "ACTIOND_ARG_9LIVES");
        for odd in ["", "a-b", "a b", "a=b", "é", "a.b"] {
            assert_eq!(prefixed(odd), None, "{odd:?}");
            assert_eq!(shell_variable(odd), Err(NotShellVariable::NoVariable));
        }
    }

    #[test]
    fn the_shells_own_variables_are_never_defined() {
        for name in [
            "path",
            "Path",
            "ifs",
            "env",
            "home",
            "ps4",
            "bash_env",
            "bash_func_x",
            "bashopts",
            "shellopts",
            "lc_all",
            "lang",
            "cdpath",
            "optind",
            "uid",
            "euid",
            "ppid",
            "pwd",
            "histfile",
            "prompt_command",
            "actiond_user",
            "actiond",
            "tmpdir",
        ] {
            assert_eq!(
                shell_variable(name),
                Err(NotShellVariable::Reserved),
                "{name}"
            );
        }
        assert_eq!(shell_variable("9lives"), Err(NotShellVariable::NoVariable));
    }

    /// Names a program reads from its environment are fine as shell variables: the command's
    /// shell reads them, and the programs it starts never see them.
    #[test]
    fn other_names_are_shell_variables() {
        for name in [
            "host",
            "grep",
            "zip",
            "tar_options",
            "rsync_rsh",
            "http_proxy",
            "viminit",
            "pin",
            "container_name",
            "filepath",
            "user",
            "tz",
            "node_options",
        ] {
            assert_eq!(
                shell_variable(name),
                Ok(name.to_ascii_uppercase()),
                "{name}"
            );
        }
    }

    #[test]
    fn the_prelude_unsets_then_assigns_without_exporting() {
        assert_eq!(shell_prelude(&[]), "");
        assert_eq!(
            shell_prelude(&["GREP".into(), "PIN".into()]),
            "unset GREP PIN; GREP=$ACTIOND_ARG_GREP PIN=$ACTIOND_ARG_PIN; "
        );
    }
}
